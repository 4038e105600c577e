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
  return found
}

/** The URL as a message shows it: its origin and path, never its query (which may hold a token). */
const shownUrl = (url: string): string => {
  const parsed = new URL(url)
  return printable(`${parsed.origin}${parsed.pathname}`)
}

/**
 * `text` with every secret the adapter holds left out: a header's value (fetch's own error for a value it refuses
 * quotes it, a token read with a newline in it say), as given or trimmed as fetch trims it, and the URL's query; and
 * whatever the text quotes, which may be a header's value as fetch normalised it.
 */
const withoutSecrets = (text: string, url: string, headers: Readonly<Record<string, string>>): string => {
  const secrets = [...Object.values(headers).flatMap((value) => [value, value.trim()]), new URL(url).search]
    .filter((secret) => secret.trim().length > 0)
    .sort((a, b) => b.length - a.length)
  const left = secrets.reduce((out, secret) => out.split(secret).join("<withheld>"), text)
  return left.replace(/"[^"]*"/g, '"<withheld>"')
}

/** The start's failure, saying where, and why underneath when effect's words do not. */
export const httpStartFailure = (
  url: string,
  headers: Readonly<Record<string, string>>,
  error: McpClientError
): McpClientError => {
  const found = rootCause(error.reason.cause)
  const cause = found === undefined ? undefined : printable(withoutSecrets(found, url, headers).slice(0, MaxCauseChars))
  // Where first: the host cuts what it repeats of a failed reply at 200 characters.
  const where = `${error.message} at ${shownUrl(url)}`
  const why = cause === undefined || error.message.includes(cause) ? where : `${where}: ${cause}`
  return new McpClientError({ reason: new TransportError({ description: why }) })
}
