import { Effect, Stdio, Stream } from "effect"

/**
 * The adapter given `"protocol": "mcp"` in its config entry: the host then speaks MCP to it (the adapter is an
 * extension of the line protocol, and the MCP server is its child), and its first request is JSON-RPC `initialize`,
 * which no extension can read. Said as what to change, where the SDK's words would be a protocol mismatch.
 */

/** How much of stdin is kept to tell: the first line of an MCP client is short. */
const HeadBytes = 4096

/** The Stdio service with its stdin's first bytes kept, and what they say about who is speaking. */
export const watchingStdin = Effect.gen(function* () {
  const stdio = yield* Stdio.Stdio
  const head: Array<Uint8Array> = []
  let kept = 0
  const stdin = Stream.tap(stdio.stdin, (chunk) =>
    Effect.sync(() => {
      if (kept >= HeadBytes) return
      head.push(chunk.subarray(0, HeadBytes - kept))
      kept += Math.min(chunk.length, HeadBytes - kept)
    })
  )
  /** The problem when the first line is an MCP client's request, else undefined. */
  const mcpClientProblem = (): string | undefined => {
    const first = Buffer.concat(head).toString("utf8").split("\n", 1)[0] ?? ""
    let message: unknown
    try {
      message = JSON.parse(first)
    } catch {
      return undefined
    }
    if (typeof message !== "object" || message === null || !("jsonrpc" in message) || !("method" in message)) {
      return undefined
    }
    return (
      `its first request is an MCP client's (JSON-RPC ${typeof message.method === "string" ? JSON.stringify(message.method.slice(0, 40)) : "request"}): ` +
      `it is an extension, not an MCP server; remove "protocol": "mcp" from its config entry (docs/mcp.md)`
    )
  }
  return { stdio: { ...stdio, stdin }, mcpClientProblem }
})
