import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, type ExpectStatic, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"
import { adapterExtension, inHostExtension, invoke, lines, writeConfig } from "../support/mcp-helpers.ts"

/**
 * An MCP server that attacks its client mid-call (test/fixtures/mcp/hostile-server.mjs), through the host's own MCP
 * client (`"protocol": "mcp"`) and through `abhed-ext mcp`: its requests to the client (run the model, list the
 * roots, ask the user) are refused, never answered; notifications mid-call (progress, a log message of escape
 * sequences, tools/list_changed) change nothing and reach no terminal; a tool renamed between list and call is a
 * failed result, not another tool; a malformed result is a failed result named by its shape, its content kept out
 * of the result, the log and the audit.
 */

type Line = Record<string, unknown>
const Slow = 180_000
const hostileServer = join(repoRoot, "test/fixtures/mcp/hostile-server.mjs")

/** Every character a terminal acts on, but tab and the line breaks between lines. */
const controls = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/

const session = lines(
  { event: "list_tools" },
  invoke("mcp__h__ask"),
  invoke("mcp__h__chatty"),
  invoke("mcp__h__renamed"),
  invoke("mcp__h__malformed"),
  invoke("mcp__h__plain")
)

const attacked = async (extension: object, expect: ExpectStatic) => {
  const config = writeConfig({ extensions: [extension] })
  const audit = join(config, "..", "audit.jsonl")
  const r = await runCli(["--log-level", "debug", "run", "-c", config, "--audit", audit, "--audit-content", "full"], {
    input: session
  })
  expect(r.code, r.stderr).toBe(0)
  const [list, ask, chatty, renamed, malformed, after] = jsonLines(r.stdout) as Array<Line>
  // What was listed is what is called: the old name, not the server's new one.
  expect((list?.["tools"] as Array<{ name: string }>).map((t) => t.name)).toEqual([
    "mcp__h__ask",
    "mcp__h__chatty",
    "mcp__h__malformed",
    "mcp__h__plain",
    "mcp__h__renamed"
  ])
  expect(ask).toEqual({
    event: "invoke_tool",
    is_error: false,
    result: "asked; client said: sampling/createMessage: error | roots/list: error | elicitation/create: error"
  })
  expect(chatty).toEqual({ event: "invoke_tool", is_error: false, result: "chatty done" })
  expect(renamed).toEqual({
    event: "invoke_tool",
    is_error: true,
    result: "the MCP server refused the call (JSON-RPC error -32602): unknown tool: renamed"
  })
  expect(malformed).toEqual({
    event: "invoke_tool",
    is_error: true,
    result: "the MCP server's answer is not a valid MCP message (Invalid MCP payload)"
  })
  // The connection survived all of it.
  expect(after).toEqual({ event: "invoke_tool", is_error: false, result: "called plain" })
  expect(r.stderr).not.toContain("SECRET-CONTENT-42")
  expect(r.stderr).not.toMatch(controls)
  expect(r.stderr).not.toContain("PWNED")
  expect(readFileSync(audit, "utf8")).not.toContain("SECRET-CONTENT-42")
}

describe.concurrent("an MCP server that attacks its client mid-call", () => {
  it(
    "through the host's own client (protocol mcp)",
    async ({ expect }) => {
      await attacked(inHostExtension("h", [hostileServer]), expect)
    },
    Slow
  )

  it(
    "through abhed-ext mcp",
    async ({ expect }) => {
      const adapter = adapterExtension("h", [hostileServer])
      await attacked({ ...adapter, name: "h" }, expect)
    },
    Slow
  )
})
