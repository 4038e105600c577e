/**
 * How the adapter's HTTP requests to its MCP server (`--url`) follow redirects: only within the URL's origin, and only
 * the redirects that keep the request (307, 308): a POST that a 301, 302 or 303 turns into a GET without its body
 * reaches no MCP endpoint anyway. A redirect to another origin is not followed: `fetch` would send it the
 * `--header`s (an API key under a name of its own: only `Authorization` is dropped across origins), so a server with
 * an open redirect could hand the key to anyone. Not followed, the request fails, saying where the server pointed,
 * so the user can give that URL as `--url` if it is meant.
 */

/** At most this many redirects a request. */
export const MaxRedirects = 5

/** Where a redirect points, for a message: its origin and path (not its query, which may hold a token). */
const shown = (url: URL): string => `${url.origin}${url.pathname}`

/** A `fetch` that follows redirects as above, over `base` (the global `fetch` by default). */
export const sameOriginFetch =
  (base: typeof globalThis.fetch = globalThis.fetch): typeof globalThis.fetch =>
  async (input, init) => {
    let url = new URL(input instanceof Request ? input.url : input)
    const origin = url.origin
    for (let hop = 0; ; hop++) {
      const response = await base(url, { ...init, redirect: "manual" })
      if (response.status < 300 || response.status > 399) return response
      const location = response.headers.get("location")
      if (location === null) return response
      const next = new URL(location, url)
      await response.body?.cancel()
      if (next.origin !== origin)
        throw new Error(
          `the MCP server at ${shown(url)} redirected to ${shown(next)}, another origin: not followed, so the ` +
            "headers given for --url go nowhere else; give that URL as --url if it is meant"
        )
      if (response.status !== 307 && response.status !== 308)
        throw new Error(
          `the MCP server at ${shown(url)} answered ${response.status} to ${shown(next)}: a redirect that would ` +
            "drop the request's body is not followed; give that URL as --url"
        )
      if (hop >= MaxRedirects)
        throw new Error(`the MCP server at ${shown(url)} redirected more than ${MaxRedirects} times`)
      url = next
    }
  }
