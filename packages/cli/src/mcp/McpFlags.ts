import { Option } from "effect"
import { Argument, Flag } from "effect/cli"
import { argsProblem } from "../ArgsProblem.ts"
import { positive } from "../DurationFlags.ts"
import { parseTarget } from "./McpTarget.ts"

/**
 * `abhed-ext mcp`'s flags and the checks after them, apart from the command (which needs the CLI's version), so that
 * `import-mcp` can check the lines it writes with the very same parser.
 */

/** Below the extension's own default `timeout_ms` (5000), so a hanging call is ours to cancel, not the host's to kill us for. */
export const DefaultMcpTimeoutMs = 4000

export const flags = {
  name: Flag.String("name").pipe(
    Flag.withDescription("the server's name in its tools' names, mcp__NAME__TOOL (default: the command's file name)"),
    Flag.optional
  ),
  timeoutMs: Flag.Int("timeout-ms").pipe(
    Flag.withDescription(
      "how long a call (and the server's start) may take before it fails, in ms (keep it below the extension's timeout_ms)"
    ),
    Flag.withDefault(DefaultMcpTimeoutMs),
    positive
  ),
  startupTimeoutMs: Flag.Int("startup-timeout-ms").pipe(
    Flag.withDescription(
      "how long the server's start and the listing of its tools may take, in ms (default: --timeout-ms; keep it below the extension's timeout_ms)"
    ),
    positive,
    Flag.optional
  ),
  url: Flag.String("url").pipe(
    Flag.withDescription(
      "a streamable HTTP MCP server's URL (instead of a command); ${VAR} is read from the environment"
    ),
    Flag.optional
  ),
  header: Flag.String("header").pipe(
    Flag.withDescription(
      "an HTTP header for --url, NAME:VALUE (repeatable); ${VAR} in VALUE is read from the environment"
    ),
    Flag.atLeast(0)
  ),
  command: Argument.String("command").pipe(
    Argument.withDescription("the MCP server's command (after --)"),
    Argument.optional
  ),
  args: Argument.String("args").pipe(Argument.withDescription("its arguments"), Argument.variadic())
}

/** The target and name from the parsed flags, with `env` for the `${VAR}` references in --url and --header. */
export const targetOf = (
  {
    args,
    command,
    header,
    name,
    url
  }: {
    readonly name: Option.Option<string>
    readonly url: Option.Option<string>
    readonly header: ReadonlyArray<string>
    readonly command: Option.Option<string>
    readonly args: ReadonlyArray<string>
  },
  env: Readonly<Record<string, string | undefined>>
) =>
  parseTarget(
    {
      name: Option.getOrUndefined(name),
      url: Option.getOrUndefined(url),
      headers: header,
      command: Option.getOrUndefined(command),
      args
    },
    env
  )

/** Every variable set, to "x": what is checked before a start is the text around the references. */
const anyVariable: Readonly<Record<string, string>> = new Proxy(
  {},
  { get: (_, key) => (typeof key === "string" ? "x" : undefined) }
)

/**
 * Why `abhed-ext mcp ARGS` would not start (`args`: what follows `mcp`), or undefined when it would: `args` go
 * through this very command's parser and checks, with every `${VAR}` set, and nothing is run. `import-mcp` checks
 * what it generates with it, since an adapter that exits at startup is a server's tools lost.
 */
export const mcpArgsProblem = (args: ReadonlyArray<string>) =>
  argsProblem("mcp", flags, (parsed) => targetOf(parsed, anyVariable), args)
