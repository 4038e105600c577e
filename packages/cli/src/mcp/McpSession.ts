import type { Handlers } from "@abhed/extension/Handler"
import type { ToolDeclaration } from "@abhed/protocol"
import { Console, Deferred, Duration, Effect } from "effect"
import { McpClientError, TimeoutError } from "effect/ai/McpClientError"
import type * as McpSchema from "effect/ai/McpSchema"
import type { Connection } from "./McpConnection.ts"
import { callFault, failed, type ToolReply, toolReply } from "./McpResult.ts"
import { nameTools } from "./McpToolNames.ts"

/** A call past `--timeout-ms`, as effect's client would report it. */
const timeoutFault = new McpClientError({ reason: new TimeoutError({ operation: "tools/call" }) })

/**
 * The adapter's answers to the host (docs/mcp.md): `list_tools` with the server's tools under our names,
 * `invoke_tool` with a call to the server. A call is answered within `timeoutMs`, `list_tools` within
 * `startupTimeoutMs` (the server's start and its listing), so the host's `timeout_ms` above them never kills the
 * adapter for a slow server; every fault is a failed tool result, and the session goes on. `session_start`, when
 * subscribed, waits for the start within the same bound, so a slow start is spent in the host's
 * `startup_timeout_ms`. Every other event: no opinion.
 */

export interface SessionOptions {
  readonly name: string
  /** The bound on one call, the wait for the server included. */
  readonly timeoutMs: number
  /** The bound on the server's start and the listing of its tools. */
  readonly startupTimeoutMs: number
  readonly connection: Connection
}

/** A line on stderr, which the host logs: `abhed-ext mcp NAME: …`. */
const warn = (name: string, text: string) => Console.error(`abhed-ext mcp ${name}: ${text}`)

/** `effect` failing with `why` once `ms` have passed (interrupting it: an MCP call is then cancelled). */
const within = <A, E>(effect: Effect.Effect<A, E>, ms: number, why: string): Effect.Effect<A, E | string> =>
  Effect.timeoutOrElse(effect, { duration: Duration.millis(ms), orElse: () => Effect.fail(why) })

export const handlers = ({ connection, name, startupTimeoutMs, timeoutMs }: SessionOptions): Handlers => {
  // Our declared name → the server's tool, as of the last list_tools.
  let byName = new Map<string, McpSchema.Tool>()

  /** The client, once started, or why not. */
  const client = Deferred.await(connection).pipe(Effect.mapError((e) => `the MCP server did not start: ${e.message}`))
  const notStarted = `the MCP server has not started and listed its tools within ${startupTimeoutMs} ms (--startup-timeout-ms)`

  const listTools = Effect.gen(function* () {
    const mcp = yield* client
    const tools = yield* mcp
      .listTools()
      .pipe(Effect.mapError((e) => `the MCP server's tools could not be listed: ${callFault(e, timeoutMs).forLog}`))
    const naming = nameTools(name, tools, (tool) => tool.name)
    yield* Effect.forEach(naming.warnings, (w) => warn(name, w), { discard: true })
    byName = new Map(naming.tools.map(({ declared, tool }) => [declared, tool]))
    const declared: Array<ToolDeclaration> = naming.tools.map(({ declared, tool }) => ({
      name: declared,
      description: tool.description ?? tool.title ?? "",
      input_schema: { ...tool.inputSchema }
    }))
    return { tools: declared }
  }).pipe(
    (effect) => within(effect, startupTimeoutMs, notStarted),
    // No tools rather than no answer: the model is offered none of this server's, and the session goes on.
    Effect.catch((why) => Effect.as(warn(name, `${why}; no tools declared`), { tools: [] }))
  )

  const invoke = (tool: string, args: Readonly<Record<string, unknown>>): Effect.Effect<ToolReply> =>
    Effect.gen(function* () {
      const target = byName.get(tool)
      if (target === undefined) return failed(`${tool} is not one of the tools this MCP server declared`)
      const mcp = yield* client.pipe(Effect.mapError((why) => ({ forModel: why, forLog: why })))
      const result = yield* mcp
        .callTool({ tool: target, arguments: { ...args } })
        .pipe(Effect.mapError((e) => callFault(e, timeoutMs)))
      return toolReply(result)
    }).pipe(
      // One bound on the whole call: past it the request is interrupted, and effect's client tells the server
      // (notifications/cancelled).
      Effect.timeoutOrElse({
        duration: Duration.millis(timeoutMs),
        orElse: () => Effect.fail(callFault(timeoutFault, timeoutMs))
      }),
      Effect.catch((fault) => Effect.as(warn(name, `${tool}: ${fault.forLog}`), failed(fault.forModel)))
    )

  return {
    session_start: () => Effect.as(Effect.ignore(within(client, startupTimeoutMs, notStarted)), {}),
    list_tools: () => listTools,
    invoke_tool: (request) => invoke(request.tool, request.args)
  }
}
