import type { AuditRecord } from "@abhed/host"
import { describe, expect, it } from "vitest"
import { describeReply, legend, renderLine, renderSummary, tally } from "../../src/demo/DemoTable.ts"
import type { LineResult } from "../../src/run/Session.ts"
import { colour, plain } from "../../src/Style.ts"

const call: LineResult = {
  line: 3,
  input: { event: "tool_call", tool: "bash", args: { command: "ls" } },
  output: {
    event: "tool_call",
    decision: "ask",
    reasons: [{ extension: "slow", reason: "extension slow unavailable: timed_out (2000 ms)" }],
    args: { command: "wrapped ls" },
    rounds: 2
  }
}

const record: AuditRecord = {
  seq: 4,
  session_id: "s",
  time: "2026-12-01T00:00:00.000Z",
  event: "tool_call",
  call_id: "c-1",
  duration_ms: 2010,
  outcome: {},
  notes: ["policy: allow (default)"],
  rounds: [
    {
      round: 1,
      exchanges: [
        { extension: "guard", status: "replied", latency_ms: 3, reply: { args: { command: "wrapped ls" } } },
        { extension: "other", status: "not_subscribed", latency_ms: 0 },
        { extension: "pusher", status: "not_matched", latency_ms: 0 },
        { extension: "slow", status: "timed_out", latency_ms: 2000, error: "timed_out (2000 ms)" }
      ]
    },
    {
      round: 2,
      exchanges: [
        { extension: "guard", status: "replied", latency_ms: 2, reply: {} },
        { extension: "slow", status: "dead", latency_ms: 0, error: "timed_out (2000 ms)" }
      ]
    }
  ]
}

describe("demo table", () => {
  it("shows each round, what each extension said, who was dead and why, and the decision", () => {
    const text = renderLine(call, [record], plain)
    expect(text).toContain('── line 3: tool_call bash {"command":"ls"}')
    expect(text).toContain("round 1")
    expect(text).toContain("round 2")
    expect(text).toMatch(/guard .*rewrite args → \{"command":"wrapped ls"\}/)
    expect(text).toMatch(/slow .*TIMED_OUT: timed_out \(2000 ms\)/)
    expect(text).toMatch(/slow .*DEAD: timed_out \(2000 ms\)/)
    expect(text).not.toContain("other") // not subscribed: no row
    expect(text).toMatch(/pusher +— +not matched: skipped by its match rules, not written/) // subscribed, match missed
    expect(text).toContain("note: policy: allow (default)")
    expect(text).toContain(
      "→ ASK (slow: extension slow unavailable: timed_out (2000 ms)) after 2 rounds; args rewritten to"
    )
    expect(text).not.toContain("\u001b[")
    expect(renderLine(call, [record], colour)).toContain("\u001b[")
  })

  it("a proposal equal to what its round was sent is said to change nothing, not shown as a rewrite", () => {
    const redact: LineResult = {
      line: 9,
      input: { event: "tool_result", tool: "read", args: {}, content: "key=AKIA1", is_error: false },
      output: { event: "tool_result", content: "key=[redacted]", is_error: false }
    }
    const rounds: AuditRecord = {
      ...record,
      event: "tool_result",
      notes: [],
      rounds: [
        {
          round: 1,
          exchanges: [
            { extension: "echoer", status: "replied", latency_ms: 1, reply: { content: "key=AKIA1" } },
            { extension: "redactor", status: "replied", latency_ms: 1, reply: { content: "key=[redacted]" } }
          ]
        },
        {
          round: 2,
          exchanges: [
            { extension: "echoer", status: "replied", latency_ms: 1, reply: { content: "key=[redacted]" } },
            { extension: "redactor", status: "replied", latency_ms: 1, reply: { content: "key=[redacted]" } }
          ]
        }
      ]
    }
    const rows = renderLine(redact, [rounds], plain).split("\n")
    const row = (round: number, name: string) => {
      const start = rows.findIndex((r) => r.trim() === `round ${round}`)
      return rows.slice(start + 1).find((r) => r.trim().startsWith(name)) ?? ""
    }
    expect(row(1, "echoer")).toContain("content unchanged")
    expect(row(1, "redactor")).toContain(`content: "key=[redacted]"`)
    // Round 2 was sent the redactor's proposal: both now propose what they were sent.
    expect(row(2, "echoer")).toContain("content unchanged")
    expect(row(2, "redactor")).toContain("content unchanged")
    expect(describeReply("tool_call", { args: { command: "ls" } }, { command: "ls" })).toBe("args unchanged")
    expect(describeReply("tool_call", { args: { command: "ls" } }, { command: "rm" })).toBe(
      `rewrite args → {"command":"ls"}`
    )
  })

  it("explains its words once: rounds, settled, no opinion, not matched, the policy note", () => {
    const text = legend(plain)
    for (const word of ["round N", "settled", "no opinion", "not matched", "note: policy", "deny > ask > allow"])
      expect(text).toContain(word)
  })

  it("describes replies in words", () => {
    expect(describeReply("tool_call", {})).toBe("no opinion")
    expect(describeReply("tool_call", { block: true, reason: "no" })).toBe('BLOCK "no"')
    expect(describeReply("list_tools", { tools: [{ name: "a" }, { name: "b" }] })).toBe("declares a, b")
    expect(describeReply("context", { keep: [0] })).toBe("keep: [0]")
  })

  it("tallies the session for the summary", () => {
    const results: ReadonlyArray<LineResult> = [
      call,
      {
        line: 4,
        input: { event: "tool_call", tool: "read", args: { path: ".env" } },
        output: { event: "tool_call", decision: "deny", reasons: [], args: { path: ".env" }, rounds: 1 }
      },
      {
        line: 5,
        input: { event: "tool_result", tool: "read", args: {}, content: "AKIA", is_error: false },
        output: { event: "tool_result", content: "[redacted]", is_error: false }
      },
      { line: 6, input: { event: "context", messages: [1, 2, 3] }, output: { event: "context", keep: [0] } },
      { line: 7, input: undefined, output: { error: "bad", line: 7 } }
    ]
    const t = tally(results)
    expect(t).toMatchObject({
      events: 5,
      calls: 2,
      denied: 1,
      asked: 1,
      allowed: 0,
      rewritten: 1,
      results: 1,
      redacted: 1,
      dropped: 2,
      errors: 1
    })
    expect(renderSummary(t, ["slow"])).toContain(
      "Of 2 tool calls, 1 denied, 1 asked for approval and 0 allowed; 1 had their args rewritten"
    )
    expect(renderSummary(t, ["slow"])).toContain("Extensions that failed: slow.")
  })
})
