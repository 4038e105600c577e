import type { Handlers } from "@abhed/extension/Handler"
import type { ToolDeclaration } from "@abhed/protocol"
import { Console, Deferred, Duration, Effect } from "effect"
import type * as McpSchema from "effect/ai/McpSchema"
import type { Connection } from "./McpConnection.ts"
import { callFault, failed, type ToolReply, toolReply } from "./McpResult.ts"
import { nameTools } from "./McpToolNames.ts"

/**
 * The adapter's answers to the host (docs/mcp.md): `list_tools` with the server's tools under our names,
 * `invoke_tool` with a call to the server. Every answer comes within `timeoutMs` of waiting on the server (plus the
 * wait for its start), so the host's `timeout_ms` above it never kills the adapter for a slow server; every fault is
 * a failed tool result, and the session goes on. `session_start` waits for the server to start (within the same
 * bound), so a slow start is spent in the host's `startup_timeout_ms`. Every other event: no opinion.
 */

export interface SessionOptions {
  readonly name: string
  readonly timeoutMs: number
  readonly connection: Connection
}

/** A line on stderr, which the host logs: `abhed-ext mcp NAME: …`. */
const warn = (name: string, text: string) => Console.error(`abhed-ext mcp ${name}: ${text}`)

export const handlers = ({ connection, name, timeoutMs }: SessionOptions): Handlers => {
  const bound = Duration.millis(timeoutMs)
  // Our declared name → the server's tool, as of the last list_tools.
  let byName = new Map<string, McpSchema.Tool>()

  /** The client, once started, or why not (the server's start bounded by `timeoutMs` per request). */
  const client = Deferred.await(connection).pipe(
    Effect.timeoutOrElse({
      duration: bound,
      orElse: () => Effect.fail(`the MCP server has not started within ${timeoutMs} ms (--timeout-ms)`)
    }),
    Effect.mapError((e) => typeof e === "string" ? e : `the MCP server did not start: ${e.message}`)
  )

  const listTools = Effect.gen(function*() {
    const mcp = yield* client
    const tools = yield* mcp.listTools({ timeout: bound }).pipe(
      Effect.mapError((e) => `the MCP server's tools could not be listed: ${callFault(e, timeoutMs).forLog}`)
    )
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
    // No tools rather than no answer: the model is offered none of this server's, and the session goes on.
    Effect.catch((why) => Effect.as(warn(name, `${why}; no tools declared`), { tools: [] }))
  )

  const invoke = (tool: string, args: Readonly<Record<string, unknown>>): Effect.Effect<ToolReply> =>
    Effect.gen(function*() {
      const target = byName.get(tool)
      if (target === undefined) return failed(`${tool} is not one of the tools this MCP server declared`)
      const mcp = yield* client.pipe(Effect.mapError((why) => ({ forModel: why, forLog: why })))
      const result = yield* mcp.callTool({ tool: target, arguments: { ...args } }, { timeout: bound }).pipe(
        Effect.mapError((e) => callFault(e, timeoutMs))
      )
      return toolReply(result)
    }).pipe(
      Effect.catch((fault) => Effect.as(warn(name, `${tool}: ${fault.forLog}`), failed(fault.forModel)))
    )

  return {
    session_start: () => Effect.as(Effect.ignore(client), {}),
    list_tools: () => listTools,
    invoke_tool: (request) => invoke(request.tool, request.args)
  }
}
