import { printable } from "@abhed/host/Printable"
import { McpClientError, TransportError } from "effect/ai/McpClientError"

/**
 * Why an HTTP server's start failed, said with where and the underlying cause: effect's words alone are `MCP HTTP
 * request failed`, which says neither the URL nor that the host refused the connection or has no address.
 */

/** The longest cause repeated. */
const MaxCauseChars = 300

/** The deepest message in an error's `cause` chain (fetch's `fetch failed` is caused by `connect ECONNREFUSED …`). */
const rootCause = (error: unknown): string | undefined => {
  let found: string | undefined
  let at: unknown = error
  for (let depth = 0; depth < 8 && typeof at === "object" && at !== null; depth++) {
    if ("message" in at && typeof at.message === "string" && at.message !== "") found = at.message
    at = "cause" in at ? at.cause : undefined
  }
  return found === undefined ? undefined : printable(found.slice(0, MaxCauseChars))
}

/** The URL as a message shows it: its origin and path, never its query (which may hold a token). */
const shownUrl = (url: string): string => {
  const parsed = new URL(url)
  return printable(`${parsed.origin}${parsed.pathname}`)
}

/** The start's failure, saying where, and why underneath when effect's words do not. */
export const httpStartFailure = (url: string, error: McpClientError): McpClientError => {
  const cause = rootCause(error.reason.cause)
  // Where first: the host cuts what it repeats of a failed reply at 200 characters.
  const where = `${error.message} at ${shownUrl(url)}`
  const why = cause === undefined || error.message.includes(cause) ? where : `${where}: ${cause}`
  return new McpClientError({ reason: new TransportError({ description: why }) })
}
