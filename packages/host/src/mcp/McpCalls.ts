import type { ToolDeclaration } from "@abhed/protocol"
import { Duration, Effect } from "effect"
import type * as McpClient from "effect/ai/McpClient"
import { McpClientError, TimeoutError } from "effect/ai/McpClientError"
import type * as McpSchema from "effect/ai/McpSchema"
import { callFault, type Fault, failed, type ToolReply, toolReply } from "./McpResult.ts"
import { nameTools } from "./McpToolNames.ts"

/**
 * The two things an MCP extension does (docs/mcp.md), for both shells: the host's own MCP extension
 * (McpExtension.ts) and the `abhed-ext mcp` adapter. `list` declares the server's tools as `mcp__NAME__TOOL` within a
 * bound, and answers `failed` with why when it cannot; `invoke` calls one within a bound, and every
 * way it can fail is a failed tool result that says why, so the session goes on.
 */

export interface CallsOptions {
  /** The server's name in its tools' names. */
  readonly server: string
  /** The client once the server has started, or why it has not. */
  readonly client: Effect.Effect<McpClient.McpClient, string>
  /** Says something to the operator (a call that failed and why, by shape only). */
  readonly warn: (text: string) => Effect.Effect<void>
  /** The bound on one call, the wait for the server included. */
  readonly timeoutMs: number
  /** The setting `timeoutMs` comes from, as messages name it. */
  readonly bound: string
}

/**
 * The answer to `list_tools`: the tools (with a warning for each one renamed or left out, which the host says on the
 * operator's log at startup), or why there are none (a `failed` reply, which the host warns about on the operator's
 * log and counts, where an empty list would say nothing).
 */
export type ListAnswer =
  | { readonly tools: Array<ToolDeclaration>; readonly warnings?: Array<string> }
  | { readonly failed: string }

export interface McpCalls {
  /** The tools, declared within `withinMs` (`notListed`: why not, past it, asked then). */
  readonly list: (withinMs: number, notListed: () => string) => Effect.Effect<ListAnswer>
  readonly invoke: (tool: string, args: Readonly<Record<string, unknown>>) => Effect.Effect<ToolReply>
}

/** A call past the bound, as effect's client would report it. */
const timeoutFault = new McpClientError({ reason: new TimeoutError({ operation: "tools/call" }) })

export const makeCalls = ({ bound, client, server, timeoutMs, warn }: CallsOptions): McpCalls => {
  // Our declared name → the server's tool, as of the last list.
  let byName = new Map<string, McpSchema.Tool>()

  const list: McpCalls["list"] = (withinMs, notListed) =>
    Effect.gen(function* () {
      const mcp = yield* client
      const tools = yield* mcp
        .listTools()
        .pipe(
          Effect.mapError((e) => `the MCP server's tools could not be listed: ${callFault(e, timeoutMs, bound).forLog}`)
        )
      const naming = nameTools(server, tools, (tool) => tool.name)
      byName = new Map(naming.tools.map(({ declared, tool }) => [declared, tool]))
      const declared: Array<ToolDeclaration> = naming.tools.map(({ declared, tool }) => ({
        name: declared,
        description: tool.description ?? tool.title ?? "",
        input_schema: { ...tool.inputSchema }
      }))
      // In the answer, not on this process's log: the host says them where the operator looks (ListTools.sayAtStart).
      return naming.warnings.length === 0 ? { tools: declared } : { tools: declared, warnings: [...naming.warnings] }
    }).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(withinMs),
        orElse: () => Effect.sync(notListed).pipe(Effect.flip)
      }),
      // Failed rather than no answer: the model is offered none of this server's tools, the session goes on, and the
      // host says why once (an empty list said nothing).
      Effect.catch((why): Effect.Effect<ListAnswer> => Effect.succeed({ failed: why }))
    )

  const invoke: McpCalls["invoke"] = (tool, args) =>
    Effect.gen(function* () {
      const target = byName.get(tool)
      if (target === undefined) return failed(`${tool} is not one of the tools this MCP server declared`)
      const mcp = yield* client.pipe(Effect.mapError((why): Fault => ({ forModel: why, forLog: why })))
      const result = yield* mcp
        .callTool({ tool: target, arguments: { ...args } })
        .pipe(Effect.mapError((e) => callFault(e, timeoutMs, bound)))
      return toolReply(result)
    }).pipe(
      // One bound on the whole call: past it the request is interrupted, and effect's client tells the server
      // (notifications/cancelled).
      Effect.timeoutOrElse({
        duration: Duration.millis(timeoutMs),
        orElse: () => Effect.fail(callFault(timeoutFault, timeoutMs, bound))
      }),
      Effect.catch((fault) => Effect.as(warn(`${tool}: ${fault.forLog}`), failed(fault.forModel)))
    )

  return { list, invoke }
}
