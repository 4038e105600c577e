import { McpClientError, TransportError } from "effect/ai/McpClientError"
import { describe, expect, it } from "vitest"
import { httpStartFailure } from "../../src/mcp/McpHttpStart.ts"

/** An HTTP server's start failure: where (never the URL's query) and the cause beneath, never a header's value. */

const failure = (cause: unknown) =>
  new McpClientError({ reason: new TransportError({ description: "MCP HTTP request failed", cause }) })

const chain = (...messages: ReadonlyArray<string>): unknown =>
  messages.reduceRight<unknown>((cause, message) => Object.assign(new Error(message), { cause }), undefined)

describe("httpStartFailure", () => {
  it("says the URL's origin and path and the deepest cause", () => {
    const error = httpStartFailure(
      "http://127.0.0.1:8080/mcp?token=t-7f3a",
      {},
      failure(chain("fetch failed", "connect ECONNREFUSED 127.0.0.1:8080"))
    )
    expect(error.message).toBe(
      "MCP HTTP request failed at http://127.0.0.1:8080/mcp: connect ECONNREFUSED 127.0.0.1:8080"
    )
  })

  it("withholds a header's value, as given or as fetch trimmed it, whatever the cause quotes, and the query", () => {
    const headers = { Authorization: "Bearer k-7f3a\nx ", "X-Api-Key": "k-secret-9" }
    const error = httpStartFailure(
      "https://h.example/mcp?key=q-secret",
      headers,
      failure(
        chain(
          "fetch failed",
          'Headers.append: "Bearer k-7f3a\nx" is an invalid header value; k-secret-9 at /mcp?key=q-secret; "Q"'
        )
      )
    )
    expect(error.message).not.toMatch(/k-7f3a|k-secret-9|q-secret/)
    expect(error.message).toBe(
      'MCP HTTP request failed at https://h.example/mcp: Headers.append: "<withheld>" is an invalid header value; ' +
        '<withheld> at /mcp<withheld>; "<withheld>"'
    )
  })

  it("no cause beneath: effect's words and where", () => {
    expect(httpStartFailure("http://h/mcp", {}, failure(undefined)).message).toBe(
      "MCP HTTP request failed at http://h/mcp"
    )
  })
})
