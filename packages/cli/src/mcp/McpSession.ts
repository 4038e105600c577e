import type { Handlers } from "@abhed/extension/Handler"
import type { ListToolsReply } from "@abhed/protocol"
import { makeCalls } from "@abhed/host/mcp/McpCalls"
import { Console, Deferred, Duration, Effect } from "effect"
import type { Connection } from "./McpConnection.ts"

/**
 * The adapter's answers to the host (docs/mcp.md): `list_tools` with the server's tools under our names,
 * `invoke_tool` with a call to the server (the calls themselves are the host's MCP extension's, McpCalls.ts). A call
 * is answered within `timeoutMs`, `list_tools` within `startupTimeoutMs` (the server's start and its listing), so the
 * host's `timeout_ms` above them never kills the adapter for a slow server; every fault is a failed tool result, and
 * the session goes on. `session_start`, when subscribed, waits for the start within the same bound, so a slow start
 * is spent in the host's `startup_timeout_ms`. Every other event: no opinion.
 */

export interface SessionOptions {
  readonly name: string
  /** The bound on one call, the wait for the server included. */
  readonly timeoutMs: number
  /** The bound on the server's start and the listing of its tools. */
  readonly startupTimeoutMs: number
  readonly connection: Connection
}

export const handlers = ({ connection, name, startupTimeoutMs, timeoutMs }: SessionOptions): Handlers => {
  /** The client, once started, or why not. */
  const client = Deferred.await(connection).pipe(Effect.mapError((e) => `the MCP server did not start: ${e.message}`))
  // Asked when the bound is past: still starting is a server that has not answered initialize.
  const notStarted = () =>
    Deferred.isDoneUnsafe(connection)
      ? `the MCP server did not list its tools within ${startupTimeoutMs} ms (--startup-timeout-ms)`
      : `the MCP server did not start: it did not answer initialize within ${startupTimeoutMs} ms (--startup-timeout-ms; ` +
        "raise it for a server slow to start, one npx downloads first say)"
  const warn = (text: string) => Console.error(`abhed-ext mcp ${name}: ${text}`)
  const calls = makeCalls({
    server: name,
    client,
    // A line on stderr, which the host logs: `abhed-ext mcp NAME: …`.
    warn,
    timeoutMs,
    bound: "--timeout-ms"
  })
  const started = Effect.timeoutOrElse(client, {
    duration: Duration.millis(startupTimeoutMs),
    orElse: () => Effect.fail(notStarted())
  })
  return {
    session_start: () => Effect.as(Effect.ignore(started), {}),
    // No tools, `failed` with why: the host says it once on the operator's log (this line is for `abhed-ext mcp`
    // run alone, and the host's debug log).
    list_tools: () =>
      Effect.tap(calls.list(startupTimeoutMs, notStarted), (answer) =>
        "failed" in answer
          ? warn(`${answer.failed}; no tools declared`)
          : // The host says them too, from the reply; here for `abhed-ext mcp` run alone.
            Effect.forEach(answer.warnings ?? [], warn, { discard: true })
      ).pipe(
        // A `failed` reply is any event's (the protocol's), though the reply types name only the event's fields.
        Effect.map((answer) => answer as ListToolsReply)
      ),
    invoke_tool: (request) => calls.invoke(request.tool, request.args)
  }
}
