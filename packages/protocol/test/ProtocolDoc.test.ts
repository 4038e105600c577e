import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { decodeReply, isEventName, parseConfig, Request } from "../src/index.ts"

/** The examples in docs/protocol.md are what extension authors copy: they must be valid. */
const doc = readFileSync(fileURLToPath(new URL("../../../docs/protocol.md", import.meta.url)), "utf8")
const jsonBlocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? "")

describe("docs/protocol.md examples", () => {
  it("has examples for every event", () => {
    const events = new Set(jsonBlocks.flatMap((b) => [...b.matchAll(/"event":"([a-z_]+)"/g)].map((m) => m[1])))
    expect([...events].sort()).toEqual(
      [
        "before_agent_start",
        "before_compact",
        "context",
        "invoke_tool",
        "list_tools",
        "session_start",
        "tool_call",
        "tool_result"
      ].sort()
    )
  })

  it("every request decodes with the Request schema and every reply with decodeReply for its event", () => {
    let checked = 0
    for (const block of jsonBlocks) {
      if (block.includes('"extensions"')) continue // the config example, checked below
      let event: string | undefined
      for (const line of block.split("\n").filter((l) => l.trim() !== "")) {
        const value: unknown = JSON.parse(line)
        const isRequest = typeof value === "object" && value !== null && "event" in value
        if (isRequest) {
          expect(Result.isSuccess(Schema.decodeUnknownResult(Request)(value)), line).toBe(true)
          event = String(Reflect.get(value, "event"))
        } else {
          if (event === undefined || !isEventName(event)) throw new Error(`reply without a request: ${line}`)
          const r = decodeReply(event, value)
          expect(Result.isSuccess(r) && r.success.ignored, line).toEqual([])
        }
        checked++
      }
    }
    expect(checked).toBeGreaterThan(15)
  })

  it("the config example is a valid abhed.json", () => {
    const configs = jsonBlocks.filter((b) => b.includes('"extensions"'))
    expect(configs.length).toBe(1)
    for (const text of configs) {
      const r = parseConfig(text)
      expect(Result.isSuccess(r) ? "valid" : r.failure.message).toBe("valid")
    }
  })

  it("the error example is what parseConfig really prints for the example file", () => {
    const bad = [...doc.matchAll(/```jsonc\n([\s\S]*?)```/g)].map((m) => m[1] ?? "")
    expect(bad.length).toBe(1)
    const r = parseConfig(bad[0] ?? "")
    if (Result.isSuccess(r)) throw new Error("expected failure")
    // The doc-test markers (`<!-- doc-test: … -->`) are for other tests: not part of the text compared.
    const text = doc.replace(/^<!-- doc-test: [^>]* -->\n/gm, "")
    expect(text).toContain(`is rejected with:\n\n\`\`\`\n${r.failure.message}\n\`\`\``)
  })
})
