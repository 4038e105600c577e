import type { McpClientError } from "effect/ai/McpClientError"
import type * as McpSchema from "effect/ai/McpSchema"

/**
 * An MCP tool result as our `invoke_tool` reply, and every way a call can fail as a failed tool result that says
 * why (docs/mcp.md#faults). Pure: the shells run the calls (the host's MCP extension, McpExtension.ts, and the
 * `abhed-ext mcp` adapter).
 */

/** What an MCP extension answers `invoke_tool` with. */
export interface ToolReply {
  readonly result: unknown
  readonly is_error: boolean
}

/**
 * The largest result passed on, in bytes of JSON: a quarter of a million tokens, more than a model's
 * context holds. (The host drops an extension whose reply line passes 16 MiB, and its tools with it.)
 */
export const MaxResultBytes = 1024 * 1024

/** The longest server error message passed on to the model. */
const MaxMessageChars = 2000

const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

/** One content block as text: binary content is described by its type and size, never inlined. */
const blockText = (block: McpSchema.ContentBlock): string => {
  switch (block.type) {
    case "text":
      return block.text
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${block.data.length} bytes, not shown]`
    case "resource":
      return "text" in block.resource
        ? block.resource.text
        : `[resource ${block.resource.uri}${block.resource.mimeType === undefined ? "" : ` ${block.resource.mimeType}`}, binary, not shown]`
    case "resource_link":
      return `${block.title ?? block.name}: ${block.uri}${block.description === undefined ? "" : `\n${block.description}`}`
  }
}

/**
 * The reply for a tool result: structured content as JSON when the server gives it (its text blocks then repeat it
 * as text), else the content blocks' text joined by newlines. `isError` is a failed tool result with the same
 * content. A result over `MaxResultBytes` is a failed one that gives its size.
 */
export const toolReply = (result: McpSchema.CallToolResult): ToolReply => {
  const isError = result.isError === true
  const value =
    result.structuredContent !== undefined && !isError
      ? result.structuredContent
      : result.content.map(blockText).join("\n")
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? "null")
  if (bytes > MaxResultBytes) {
    return {
      result: `the MCP server's result is ${mib(bytes)}, over the limit of ${mib(MaxResultBytes)}; it was dropped`,
      is_error: true
    }
  }
  return { result: value, is_error: isError }
}

/** A failed tool result saying why. */
export const failed = (why: string): ToolReply => ({ result: why, is_error: true })

/** Why a call failed, for the model (`forModel`) and for the log (shapes only: a server's message may echo args). */
export interface Fault {
  readonly forModel: string
  readonly forLog: string
}

const same = (text: string): Fault => ({ forModel: text, forLog: text })

/**
 * A call's failure from effect's MCP client, as a fault. `timeoutMs` is the bound on the call, and `bound` names the
 * setting it comes from (the adapter's `--timeout-ms`, the host's share of `timeout_ms`).
 */
export const callFault = (error: McpClientError, timeoutMs: number, bound = "--timeout-ms"): Fault => {
  const reason = error.reason
  switch (reason._tag) {
    case "TimeoutError":
      return same(`no answer from the MCP server within ${timeoutMs} ms (${bound}); the call was cancelled`)
    case "ProtocolError": {
      if (reason.code !== undefined) {
        const message = reason.description ?? ""
        const shown = message.length > MaxMessageChars ? `${message.slice(0, MaxMessageChars)}…` : message
        return {
          forModel: `the MCP server refused the call (JSON-RPC error ${reason.code}): ${shown}`,
          forLog: `the MCP server refused the call (JSON-RPC error ${reason.code}, a message of ${message.length} characters)`
        }
      }
      return same(`the MCP server broke the protocol (${reason.message}); its connection is closed`)
    }
    case "TransportError":
    case "ClosedError":
      return same(`the connection to the MCP server is lost (${reason.message})`)
    case "LimitError":
      return same(`the MCP server sent a message over the size limit (${reason.message}); its connection is closed`)
    case "HttpError":
      return same(
        `the MCP server answered HTTP ${reason.status}${reason.code === undefined ? "" : ` (JSON-RPC error ${reason.code})`}`
      )
    case "ValidationError":
      return same(`the MCP server's answer is not a valid MCP message (${reason.description})`)
    case "UnsupportedError":
    case "ConfigurationError":
      return same(`the MCP client cannot make this call (${reason.description})`)
    case "ToolError":
      return same("the MCP tool reported an error")
  }
}
