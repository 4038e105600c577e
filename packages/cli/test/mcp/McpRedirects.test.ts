import { describe, expect, it } from "vitest"
import { MaxRedirects, sameOriginFetch } from "../../src/mcp/McpRedirects.ts"

/** The adapter's redirects: within the --url's origin, 307/308 only; anything else fails saying where it pointed. */

/** A fake `fetch`: each URL's answer, and every request it was given (its URL and its headers). */
const server = (answers: Record<string, { status: number; location?: string }>) => {
  const seen: Array<{ url: string; headers: unknown; redirect: unknown }> = []
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = String(input)
    seen.push({ url, headers: init?.headers, redirect: init?.redirect })
    const answer = answers[url] ?? { status: 200 }
    return new Response(answer.status === 200 ? "ok" : null, {
      status: answer.status,
      headers: answer.location === undefined ? {} : { location: answer.location }
    })
  }
  return { fetch, seen }
}

const init = { method: "POST", headers: { "x-api-key": "k" }, body: "{}" }

describe("sameOriginFetch", () => {
  it("follows 307 and 308 within the origin, with the request as it was", async () => {
    const s = server({
      "https://mcp.example/mcp": { status: 307, location: "/mcp/" },
      "https://mcp.example/mcp/": { status: 308, location: "https://mcp.example/v2/mcp" }
    })
    const response = await sameOriginFetch(s.fetch)("https://mcp.example/mcp", init)
    expect(await response.text()).toBe("ok")
    expect(s.seen.map((r) => r.url)).toEqual([
      "https://mcp.example/mcp",
      "https://mcp.example/mcp/",
      "https://mcp.example/v2/mcp"
    ])
    for (const r of s.seen) expect(r).toMatchObject({ headers: init.headers, redirect: "manual" })
  })

  it("another origin is not followed, and the message shows where without the query", async () => {
    const s = server({ "https://mcp.example/mcp": { status: 307, location: "https://evil.example/x?token=abc" } })
    await expect(sameOriginFetch(s.fetch)("https://mcp.example/mcp", init)).rejects.toThrow(
      "the MCP server at https://mcp.example/mcp redirected to https://evil.example/x, another origin: not followed"
    )
    expect(s.seen.map((r) => r.url)).toEqual(["https://mcp.example/mcp"])
    // Another port or scheme is another origin too.
    const port = server({ "http://127.0.0.1:1/mcp": { status: 308, location: "http://127.0.0.1:2/mcp" } })
    await expect(sameOriginFetch(port.fetch)("http://127.0.0.1:1/mcp", init)).rejects.toThrow("another origin")
  })

  it("a redirect that drops the body (301, 302, 303) is not followed; nor more than MaxRedirects", async () => {
    for (const status of [301, 302, 303]) {
      const s = server({ "https://mcp.example/mcp": { status, location: "/mcp/" } })
      await expect(sameOriginFetch(s.fetch)("https://mcp.example/mcp", init)).rejects.toThrow(
        `answered ${status} to https://mcp.example/mcp/`
      )
    }
    const loop = server({ "https://mcp.example/a": { status: 307, location: "/a" } })
    await expect(sameOriginFetch(loop.fetch)("https://mcp.example/a", init)).rejects.toThrow(
      `redirected more than ${MaxRedirects} times`
    )
    expect(loop.seen).toHaveLength(MaxRedirects + 1)
  })

  it("an answer that is not a redirect, or a 3xx without a location, is returned as it is", async () => {
    const s = server({ "https://mcp.example/mcp": { status: 304 } })
    expect((await sameOriginFetch(s.fetch)("https://mcp.example/mcp", init)).status).toBe(304)
  })
})
