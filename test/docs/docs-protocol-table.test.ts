import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Protocol from "@abhed/protocol"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/cli-helpers.ts"

/**
 * docs/extensions.md's "protocol in one table" is what an author writes an extension from: each event's request
 * fields and the reply fields that count must be the protocol's, no more and no fewer (`event`, `session_id` and `id`,
 * which every request has, are said above the table).
 */

const Schemas: Record<string, readonly [{ readonly fields: object }, { readonly fields: object }]> = {
  tool_call: [Protocol.ToolCallRequest, Protocol.ToolCallReply],
  tool_result: [Protocol.ToolResultRequest, Protocol.ToolResultReply],
  context: [Protocol.ContextRequest, Protocol.ContextReply],
  before_agent_start: [Protocol.BeforeAgentStartRequest, Protocol.BeforeAgentStartReply],
  before_compact: [Protocol.BeforeCompactRequest, Protocol.BeforeCompactReply],
  list_tools: [Protocol.ListToolsRequest, Protocol.ListToolsReply],
  invoke_tool: [Protocol.InvokeToolRequest, Protocol.InvokeToolReply],
  session_start: [Protocol.SessionStartRequest, { fields: {} }],
  session_end: [Protocol.SessionEndRequest, { fields: {} }]
}

const Common = ["event", "session_id", "id"]

/** The field names a cell names: its backticked identifiers outside parentheses (what is inside explains them). */
const named = (cell: string): ReadonlyArray<string> =>
  [...cell.replaceAll(/\([^)]*\)/g, "").matchAll(/`([a-z_]+)`/g)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]))

const table = (() => {
  const lines = readFileSync(join(repoRoot, "docs/extensions.md"), "utf8").split("\n")
  const from = lines.findIndex((l) => l.startsWith("## The protocol in one table"))
  const rows = new Map<string, { readonly request: ReadonlyArray<string>; readonly reply: ReadonlyArray<string> }>()
  for (const line of lines.slice(from + 1)) {
    if (line.startsWith("## ")) break
    const cells = line.split(" | ").map((c) => c.replace(/^\|\s*/, "").replace(/\s*\|$/, ""))
    if (cells.length !== 3) continue
    for (const event of named(cells[0] ?? ""))
      rows.set(event, { request: named(cells[1] ?? ""), reply: named(cells[2] ?? "") })
  }
  return rows
})()

describe("docs/extensions.md: the protocol in one table is the protocol's", () => {
  it("lists every event", () => {
    expect([...table.keys()].sort()).toEqual(Object.keys(Schemas).sort())
  })

  it.each(Object.entries(Schemas))("%s: its request fields and reply fields", (event, [request, reply]) => {
    const row = table.get(event)
    expect({ request: [...(row?.request ?? [])].sort(), reply: [...(row?.reply ?? [])].sort() }).toEqual({
      request: Object.keys(request.fields)
        .filter((f) => !Common.includes(f))
        .sort(),
      reply: Object.keys(reply.fields).sort()
    })
  })

  it("says above the table that every request has event, session_id and id", () => {
    const text = readFileSync(join(repoRoot, "docs/extensions.md"), "utf8")
    const intro = text.slice(text.indexOf("## The protocol in one table"), text.indexOf("| event |"))
    for (const field of Common) expect(intro).toContain(`\`${field}\``)
  })
})
