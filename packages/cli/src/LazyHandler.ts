import { Effect } from "effect"

/**
 * A command's handler, loaded when that command runs rather than when the CLI starts. Every command's definition
 * (its flags and help) is read at start, to parse the command line; its implementation is not: `abhed-ext hook`
 * and `abhed-ext mcp`, started once per configured hook or server in every session, never load the host, the audit
 * report, the MCP client or the OpenTelemetry exporters that other commands use.
 */
export const lazyHandler =
  <Input, E, R>(load: () => Promise<(input: Input) => Effect.Effect<void, E, R>>) =>
  (input: Input): Effect.Effect<void, E, R> =>
    Effect.flatMap(Effect.promise(load), (handler) => handler(input))
