import { describe, expect, it } from "vitest"
import { evaluate, type Exchange, type Observation, replyProblem } from "../../src/check/CheckResult.ts"

const listTools = {
  label: "list_tools",
  event: "list_tools" as const,
  request: { event: "list_tools", session_id: "s" }
}
const tools = (...names: ReadonlyArray<string>) =>
  JSON.stringify({ tools: names.map((name) => ({ name, description: "", input_schema: {} })) })

describe("replyProblem: list_tools names", () => {
  it("a name the host would reject is a problem, shown with look-alike characters escaped", () => {
    expect(replyProblem(listTools, tools("ok", "b\u0430sh"))).toBe(
      'tools[1].name: "b\\u0430sh" is not a valid tool name (^[A-Za-z0-9_-]{1,64}$, not __proto__): the host rejects it'
    )
    expect(replyProblem(listTools, tools("bash "))).toMatch(/^tools\[0\]\.name: "bash " is not a valid tool name/)
    expect(replyProblem(listTools, tools(""))).toMatch(/^tools\[0\]\.name: "" is not a valid tool name/)
    expect(replyProblem(listTools, tools("json.format"))).toMatch(
      /^tools\[0\]\.name: "json.format" is not a valid tool name/
    )
  })
  it("valid names pass", () => {
    expect(replyProblem(listTools, tools("word_count", "json_format-2"))).toBeUndefined()
    expect(replyProblem(listTools, `{}`)).toBeUndefined()
  })
})

describe("replyProblem: a reply that says failed", () => {
  const toolCall = {
    label: "tool_call bash",
    event: "tool_call" as const,
    request: { event: "tool_call", session_id: "s", call_id: "c", tool: "bash", args: {} }
  }
  it("is a problem: the extension could not answer a valid request, and the host would apply its on_failure", () => {
    expect(replyProblem(toolCall, '{"failed":"parser threw"}')).toBe(
      'could not answer (its reply says "failed": "parser threw"): the host applies its on_failure'
    )
    expect(replyProblem(toolCall, '{"failed":3}')).toMatch(/^failed: expected a string/)
    expect(replyProblem(toolCall, '{"failed":null}')).toBeUndefined()
  })
})

describe("evaluate: echoes_ids", () => {
  const sessionStart = {
    label: "session_start",
    event: "session_start" as const,
    request: { event: "session_start", session_id: "s" }
  }
  const observed = (outcomes: ReadonlyArray<Exchange["outcome"]>): Observation => ({
    spawn: { ok: true },
    sequence: outcomes.map((outcome) => ({ planned: sessionStart, outcome })),
    burst: [],
    stray: [],
    exit: { _tag: "exited", code: 0, after_ms: 1 },
    stderr_tail: ""
  })
  const echoes = (o: Observation) => evaluate(o).find((c) => c.id === "echoes_ids")

  it("is not passed when no request got a JSON reply: there was nothing to check", () => {
    for (const outcomes of [
      [{ _tag: "timed_out", waited_ms: 10 }],
      [{ _tag: "eof" }],
      [{ _tag: "replied", text: "hello", latency_ms: 1 }],
      []
    ] as const) {
      expect(echoes(observed(outcomes))).toEqual({
        id: "echoes_ids",
        title: "no reply carries another request's id",
        status: "skip",
        details: ["not checked: no request got a JSON reply"]
      })
    }
  })

  it("counts only the replies it could read", () => {
    const check = echoes(
      observed([
        { _tag: "replied", text: "{}", latency_ms: 1 },
        { _tag: "replied", text: "noise", latency_ms: 1 }
      ])
    )
    expect(check?.status).toBe("pass")
    expect(check?.details[0]).toBe("no reply echoes the request's id")
  })
})
