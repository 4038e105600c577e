import { describe, expect, it } from "vitest"
import { replyProblem } from "../src/CheckResult.ts"

const listTools = { label: "list_tools", event: "list_tools" as const, request: { event: "list_tools", session_id: "s" } }
const tools = (...names: ReadonlyArray<string>) =>
  JSON.stringify({ tools: names.map((name) => ({ name, description: "", input_schema: {} })) })

describe("replyProblem: list_tools names", () => {
  it("a name the host would reject is a problem, shown with look-alike characters escaped", () => {
    expect(replyProblem(listTools, tools("ok", "b\u0430sh"))).toBe(
      "tools[1].name: \"b\\u0430sh\" is not a valid tool name (^[A-Za-z0-9_-]{1,64}$, not __proto__): the host rejects it"
    )
    expect(replyProblem(listTools, tools("bash "))).toMatch(/^tools\[0\]\.name: "bash " is not a valid tool name/)
    expect(replyProblem(listTools, tools(""))).toMatch(/^tools\[0\]\.name: "" is not a valid tool name/)
    expect(replyProblem(listTools, tools("json.format"))).toMatch(/^tools\[0\]\.name: "json.format" is not a valid tool name/)
  })
  it("valid names pass", () => {
    expect(replyProblem(listTools, tools("word_count", "json_format-2"))).toBeUndefined()
    expect(replyProblem(listTools, `{}`)).toBeUndefined()
  })
})
