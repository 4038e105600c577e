import { isJsonObject, makeLineReader, type ReadLine } from "@abhed/protocol"
import { printable } from "../Printable.ts"
import { Deferred, Effect, Exit } from "effect"
import type * as McpClient from "effect/ai/McpClient"
import { LimitError, McpClientError, ProtocolError, TransportError } from "effect/ai/McpClientError"
import type * as McpSchema from "effect/ai/McpSchema"
import * as McpProtocol from "effect/ai/McpProtocol"
import type { Readable, Writable } from "node:stream"

/**
 * MCP's stdio transport (newline-delimited JSON-RPC) over pipes the host already holds: effect's `McpClient` runs
 * over it (initialize, validation of every result), while the process is the host's own, spawned, grouped and ended
 * as any extension's (McpExtension.ts). The server's stdout is cut into lines in its `data` callback, as an
 * extension's is, and each response settles its request there: no stream, queue or fiber between the pipe and the
 * caller. What breaks the protocol for good (a line that is not JSON-RPC, a message over the limit) is reported once
 * through `onBroken`, and every request waiting fails with it.
 */

/** The largest message read from the server: a larger one breaks the connection (results over 1 MiB are dropped). */
export const MaxMessageBytes = 8 * 1024 * 1024

/**
 * The most bytes that may wait in the server's stdin, unread, for a reply to one of its own requests to be added: past
 * it the connection is broken (`Flooded`). A server that sends pings and never reads its stdin would otherwise grow
 * the client's memory by what it writes, without bound; and one that reads nothing reads no call either.
 */
export const MaxUnreadReplyBytes = 1024 * 1024

/** The most characters of a line that is not JSON-RPC shown (`excerpt`), made printable. */
export const MaxExcerptChars = 80

export type Broken =
  /** `got`: its shape; `excerpt`: its head, printable and bounded, for a shell that may show it. */
  | { readonly _tag: "NotJsonRpc"; readonly got: string; readonly excerpt: string }
  | { readonly _tag: "TooLong"; readonly maxBytes: number }
  | { readonly _tag: "Flooded"; readonly unreadBytes: number }

/** Why a connection broke, in words that follow "the connection to the MCP server is closed: ". */
export const brokenText = (why: Broken): string => {
  switch (why._tag) {
    case "NotJsonRpc":
      return `it wrote a line that is not JSON-RPC (${why.got})${why.excerpt === "" ? "" : `: ${why.excerpt}`}`
    case "TooLong":
      return `it wrote a message over ${why.maxBytes} bytes`
    case "Flooded":
      return `it sent requests and did not read the answers (over ${why.unreadBytes} bytes unread in its stdin)`
  }
}

/** The head of `text`, as a JSON string (quotes shown), printable, at most `MaxExcerptChars` of it. */
const excerptOf = (text: string): string => {
  const head = printable(JSON.stringify(text.slice(0, MaxExcerptChars)))
  return text.length > MaxExcerptChars ? `${head}…` : head
}

export interface StdioConnection {
  readonly transport: McpClient.Transport
  /** Ends the connection: every request waiting fails with `error`, and so does every later one. */
  readonly close: (error: McpClientError) => void
}

/** The connection lost (the server exited, its stdout closed): what every request waiting then fails with. */
export const transportError = (description: string) =>
  new McpClientError({ reason: new TransportError({ description }) })

const protocolError = (description: string) => new McpClientError({ reason: new ProtocolError({ description }) })

type Response = McpSchema.JsonRpcResponse

/** A JSON-RPC response's shape, as far as the client reads it before validating `result` by its method. */
const isResponse = (value: Record<string, unknown>): boolean => {
  const id = value["id"]
  if (typeof id !== "string" && typeof id !== "number") return false
  const error = value["error"]
  if (error === undefined) return "result" in value
  return isJsonObject(error) && typeof error["code"] === "number" && typeof error["message"] === "string"
}

export const connect = (
  pipes: { readonly stdin: Writable; readonly stdout: Readable },
  onBroken: (why: Broken) => void
): StdioConnection => {
  const pending = new Map<string | number, Deferred.Deferred<Response, McpClientError>>()
  let failed: McpClientError | undefined

  const close = (error: McpClientError): void => {
    if (failed !== undefined) return
    failed = error
    for (const response of pending.values()) Deferred.doneUnsafe(response, Exit.fail(error))
    pending.clear()
  }
  // Reported before the requests waiting fail: a failed request's fiber may run on at once, synchronously, and
  // must find the extension dead already (its answer is then the death, not a failed tool result).
  const broken = (why: Broken, error: McpClientError): void => {
    if (failed !== undefined) return
    onBroken(why)
    close(error)
  }

  const write = (message: McpSchema.JsonRpcMessage): void => {
    if (pipes.stdin.writable) pipes.stdin.write(`${JSON.stringify(message)}\n`)
  }

  const receive = (line: ReadLine): void => {
    // Made only when the line breaks the protocol: most lines do not.
    const excerpt = () => (line.text === undefined ? "" : excerptOf(line.text))
    if (line._tag !== "Json") {
      if (line._tag === "Invalid") {
        broken(
          { _tag: "NotJsonRpc", got: `${line.got} (${line.bytes} bytes)`, excerpt: excerpt() },
          protocolError(`the server wrote ${line.got}`)
        )
      }
      return
    }
    const value = line.value
    if (!isJsonObject(value)) {
      return broken(
        { _tag: "NotJsonRpc", got: "a JSON value that is not an object", excerpt: excerpt() },
        protocolError("the server wrote a non-object")
      )
    }
    if (typeof value["method"] === "string") {
      const id = value["id"]
      // A request from the server: the host advertises no capabilities, so it answers pings and declines the rest
      // (as effect's own stdio transport does). A notification needs no answer.
      if (typeof id === "string" || typeof id === "number") {
        const unread = pipes.stdin.writableLength
        if (unread > MaxUnreadReplyBytes) {
          return broken(
            { _tag: "Flooded", unreadBytes: MaxUnreadReplyBytes },
            transportError("the server sent requests and did not read the answers")
          )
        }
        write(
          value["method"] === "ping"
            ? { jsonrpc: "2.0", id, result: {} }
            : { jsonrpc: "2.0", id, error: { code: -32601, message: `Unsupported MCP method: ${value["method"]}` } }
        )
      }
      return
    }
    if (!isResponse(value)) {
      return broken(
        { _tag: "NotJsonRpc", got: "a message that is neither a request nor a response", excerpt: excerpt() },
        protocolError("the server wrote a malformed response")
      )
    }
    const id = value["id"] as string | number
    const response = pending.get(id)
    // None: the answer to a request given up on (cancelled past its bound), which arrives late.
    if (response === undefined) return
    pending.delete(id)
    Deferred.doneUnsafe(response, Exit.succeed(value as unknown as Response))
  }

  // The text kept: a line that breaks the protocol is shown by its head (`excerpt`).
  const reader = makeLineReader({ maxLineBytes: MaxMessageBytes, keepText: true })
  pipes.stdout.on("data", (chunk: Uint8Array) => {
    // Closed: what it writes still drains (a server blocked on a full pipe would never exit), unread.
    if (failed !== undefined) return
    const { lines, tooLong } = reader.read(chunk)
    for (const line of lines) receive(line)
    if (tooLong) {
      broken(
        { _tag: "TooLong", maxBytes: MaxMessageBytes },
        new McpClientError({ reason: new LimitError({ description: "MCP message exceeds the limit" }) })
      )
    }
  })

  const transport: McpClient.Transport = {
    "~effect/ai/McpClient/Transport": "~effect/ai/McpClient/Transport",
    protocol: McpProtocol.v2025_11_25,
    isCallable: () => true,
    notify: (message) =>
      Effect.suspend(() => {
        if (failed !== undefined) return Effect.fail(failed)
        write(message)
        return Effect.void
      }),
    request: (message) =>
      Effect.suspend(() => {
        if (failed !== undefined) return Effect.fail(failed)
        const response = Deferred.makeUnsafe<Response, McpClientError>()
        pending.set(message.id, response)
        write(message)
        return Deferred.await(response).pipe(
          // Past its bound (interrupted): the server is told, and its late answer is dropped (`receive`).
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              if (!pending.delete(message.id) || message.method === "initialize") return
              write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: message.id } })
            })
          )
        )
      })
  }
  return { transport, close }
}
