import { escapeXml } from "@abhed/cli/casetest/JUnit"
import { type ReadRecord, readRecord, sessionsOf } from "@abhed/cli/replay/AuditInput"
import { compareCall, compareContext, compareResult } from "@abhed/cli/replay/ReplayCompare"
import { planOf } from "@abhed/cli/replay/ReplayPlan"
import type { AuditRecord, AuditRound } from "@abhed/host"
import { Result } from "effect"
import { describe, expect, it } from "vitest"

/**
 * The pure parts of `replay` (and `test`'s XML escaping): what a record allows to be sent again, how a change is
 * named (a rewrite that appears is stricter, one that goes is looser), and how records fall into sessions.
 */

const replied = (extension: string, reply: unknown) => ({ extension, status: "replied" as const, latency_ms: 1, reply })

const rec = (over: Partial<ReadRecord> & Pick<ReadRecord, "event" | "outcome">): ReadRecord => ({
  where: "a.jsonl:1",
  seq: 0,
  session_id: "s",
  call_id: undefined,
  tool: undefined,
  args: undefined,
  rounds: [],
  notes: [],
  ...over
})

const after = (rounds: ReadonlyArray<AuditRound>): AuditRecord => ({
  seq: 0,
  session_id: "s",
  time: "",
  event: "tool_result",
  call_id: "c",
  rounds,
  outcome: {},
  notes: [],
  duration_ms: 0
})

const allowed = { decision: "allow", reasons: [], args: { command: "cat .env" }, rounds: 1, rewrittenBy: [] }
const call = rec({ event: "tool_call", call_id: "c", tool: "bash", args: { command: "cat .env" }, outcome: allowed })

describe("replay: comparing outcomes", () => {
  it("a call: up the order is stricter, down looser; the same level with a rewrite that appears is stricter", () => {
    const deny = {
      decision: "deny" as const,
      reasons: [{ extension: "guard", reason: "no" }],
      args: { command: "cat .env" },
      rounds: 1
    }
    expect(compareCall(call, deny)).toMatchObject({ kind: "stricter", by: ["guard"] })
    const rewritten = {
      decision: "allow" as const,
      reasons: [],
      args: { command: "cat .env.example" },
      rounds: 2,
      rewrittenBy: ["redactor"]
    }
    expect(compareCall(call, rewritten)).toMatchObject({ kind: "stricter", by: ["redactor"] })
    const wasRewritten = rec({ ...call, outcome: { ...rewritten } })
    expect(compareCall(wasRewritten, { ...allowed, decision: "allow" })).toMatchObject({
      kind: "looser",
      by: ["redactor"]
    })
    const wasDenied = rec({ ...call, outcome: { ...deny } })
    expect(compareCall(wasDenied, { ...deny, reasons: [{ extension: "guard", reason: "never" }] })).toMatchObject({
      kind: "changed",
      by: ["guard"]
    })
    expect(compareCall(wasDenied, deny)).toMatchObject({ kind: "unchanged", by: [] })
    expect(compareCall(rec({ ...call, outcome: { decision: "maybe" } }), deny)).toBeUndefined()
  })

  it("a result: is_error raised and a redaction are stricter; a context keeping fewer messages is stricter", () => {
    const result = rec({
      event: "tool_result",
      tool: "bash",
      args: {},
      outcome: { content: "KEY=AKIA", is_error: false, rounds: 1 }
    })
    expect(
      compareResult(
        result,
        { content: "KEY=AKIA", isError: false },
        { content: "KEY=AKIA", is_error: true, rounds: 1 },
        after([{ round: 1, exchanges: [replied("guard", { is_error: true })] }])
      )
    ).toMatchObject({ kind: "stricter", by: ["guard"] })
    const redacted = after([
      {
        round: 1,
        exchanges: [replied("a-same", { content: "KEY=AKIA" }), replied("redactor", { content: "KEY=[redacted]" })]
      },
      { round: 2, exchanges: [replied("a-same", {}), replied("redactor", {})] }
    ])
    // A proposal equal to the content its round was sent is none: a-same did nothing.
    expect(
      compareResult(
        result,
        { content: "KEY=AKIA", isError: false },
        { content: "KEY=[redacted]", is_error: false, rounds: 2 },
        redacted
      )
    ).toMatchObject({ kind: "stricter", by: ["redactor"] })
    const context = rec({ event: "context", outcome: { keep: [0, 1], messages: ["a", "b"], withheld: [] } })
    expect(
      compareContext(
        context,
        2,
        { keep: [0], messages: ["a"], withheld: [] },
        after([{ round: 1, exchanges: [replied("filter", { keep: [0] })] }])
      )
    ).toMatchObject({ kind: "stricter", by: ["filter"] })
    expect(compareContext(context, 2, { keep: [0, 1], messages: ["a", "b"], withheld: [] }, after([]))).toMatchObject({
      kind: "unchanged"
    })
  })

  it("a result or a context that extensions changed is compared from what came in: losing a withhold or a keep is looser", () => {
    const input = { content: "the tool's output", isError: false }
    const withheld = rec({
      event: "tool_result",
      tool: "bash",
      args: {},
      outcome: { content: "[withheld: extension gate unavailable: exited]", is_error: true, rounds: 1 },
      input: { content: input.content, is_error: false },
      rounds: [{ round: 1, exchanges: [{ extension: "gate", status: "exited", latency_ms: 1 }] }]
    })
    expect(
      compareResult(withheld, input, { content: input.content, is_error: false, rounds: 1 }, after([]))
    ).toMatchObject({
      kind: "looser",
      by: ["gate"],
      before: { content: "[withheld: extension gate unavailable: exited]", is_error: true }
    })
    expect(
      compareResult(
        withheld,
        input,
        { content: "[withheld: extension gate unavailable: exited]", is_error: true, rounds: 1 },
        after([{ round: 1, exchanges: [{ extension: "gate", status: "exited", latency_ms: 1 }] }])
      )
    ).toMatchObject({ kind: "unchanged" })
    // A tool that returns `[withheld: …]` itself withheld nothing.
    const own = { content: "[withheld: by the tool]", isError: true }
    const ownRecord = rec({
      event: "tool_result",
      tool: "bash",
      args: {},
      outcome: { content: own.content, is_error: true, rounds: 1 }
    })
    expect(compareResult(ownRecord, own, { content: own.content, is_error: true, rounds: 1 }, after([]))).toMatchObject(
      { kind: "unchanged" }
    )
    const dropped = rec({
      event: "context",
      outcome: { keep: [0], messages: ["a"], withheld: [] },
      input: { messages: ["a", "b"] },
      rounds: [{ round: 1, exchanges: [replied("filter", { keep: [0] })] }]
    })
    expect(compareContext(dropped, 2, { keep: [0, 1], messages: ["a", "b"], withheld: [] }, after([]))).toMatchObject({
      kind: "looser",
      by: ["filter"],
      before: { keep: [0] },
      after: { keep: [0, 1] }
    })
    expect(
      compareContext(
        dropped,
        2,
        { keep: [], messages: [], withheld: [{ extension: "gate", reason: "dead" }] },
        after([])
      )
    ).toMatchObject({ kind: "stricter" })
  })
})

describe("replay: what a record allows to send again", () => {
  it("a call, with its args; not one the host never sent, nor one without args", () => {
    expect(planOf(call)).toEqual({ _tag: "ToolCall", tool: "bash", args: { command: "cat .env" }, callId: "c" })
    expect(planOf(rec({ ...call, notes: ["not sent to any extension: args fail the tool's schema"] }))).toEqual({
      _tag: "NotReplayable",
      reason: "never sent to an extension (args fail the tool's schema): nothing to re-decide"
    })
    expect(planOf(rec({ ...call, args: undefined }))).toMatchObject({ _tag: "NotReplayable" })
  })

  it("without an input (an older audit), a result only when its recorded content and is_error are the tool's own", () => {
    const base = { event: "tool_result", call_id: "c", tool: "bash", args: {} }
    expect(planOf(rec({ ...base, outcome: { content: "ok", is_error: true, rounds: 1 } }))).toEqual({
      _tag: "ToolResult",
      tool: "bash",
      args: {},
      content: "ok",
      isError: true,
      callId: "c"
    })
    const raised = rec({
      ...base,
      outcome: { content: "ok", is_error: true, rounds: 1 },
      rounds: [{ round: 1, exchanges: [replied("guard", { is_error: true })] }]
    })
    expect(planOf(raised)).toMatchObject({
      _tag: "NotReplayable",
      reason: expect.stringMatching(/^is_error was raised by guard and the record holds no input/)
    })
    expect(
      planOf(rec({ ...base, outcome: { content: "[withheld: guard died]", is_error: true, rounds: 1 } }))
    ).toMatchObject({
      _tag: "NotReplayable",
      reason: expect.stringMatching(/^the content was withheld and the record holds no input/)
    })
    expect(
      planOf(rec({ ...base, outcome: { content: { sha256: "ab", bytes: 2 }, is_error: false, rounds: 1 } }))
    ).toMatchObject({ _tag: "NotReplayable", reason: expect.stringContaining("digest") })
  })

  it("a result or a context with its input: what came in is sent again, whatever the extensions made of it", () => {
    const base = { event: "tool_result", call_id: "c", tool: "bash", args: {} }
    const redacted = { content: "KEY=[redacted]", is_error: true, rounds: 2 }
    expect(planOf(rec({ ...base, outcome: redacted, input: { content: "KEY=AKIA", is_error: false } }))).toEqual({
      _tag: "ToolResult",
      tool: "bash",
      args: {},
      content: "KEY=AKIA",
      isError: false,
      callId: "c"
    })
    const withheld = { content: "[withheld: guard died]", is_error: true, rounds: 1 }
    expect(planOf(rec({ ...base, outcome: withheld, input: { content: "out", is_error: false } }))).toMatchObject({
      _tag: "ToolResult",
      content: "out",
      isError: false
    })
    // Digest mode: the input is a digest too.
    expect(
      planOf(rec({ ...base, outcome: withheld, input: { content: { sha256: "ab", bytes: 3 }, is_error: false } }))
    ).toEqual({
      _tag: "NotReplayable",
      reason: "the content is recorded as a digest (record with --audit-content full to replay it)"
    })
    const kept = { keep: [0], messages: ["a"], withheld: [] }
    expect(planOf(rec({ event: "context", outcome: kept, input: { messages: ["a", "b"] } }))).toEqual({
      _tag: "Context",
      messages: ["a", "b"]
    })
    expect(
      planOf(rec({ event: "context", outcome: kept, input: { messages: { sha256: "ab", bytes: 9 } } }))
    ).toMatchObject({ _tag: "NotReplayable", reason: expect.stringContaining("digest") })
  })

  it("without an input, a context only when nothing was dropped from it; other events are not re-decided; the host's own are skipped", () => {
    const kept = rec({ event: "context", outcome: { keep: [0], messages: ["a"], withheld: [] } })
    expect(planOf(kept)).toEqual({ _tag: "Context", messages: ["a"] })
    expect(planOf(rec({ ...kept, rounds: [{ round: 1, exchanges: [replied("filter", { keep: [0] })] }] }))).toEqual({
      _tag: "NotReplayable",
      reason:
        "filter sent a keep and the record holds no input (an audit from an older abhed-ext): what came in is not recorded"
    })
    expect(planOf(rec({ event: "before_agent_start", outcome: { system: "x" } }))).toMatchObject({
      _tag: "NotReplayable"
    })
    expect(planOf(rec({ event: "session_start", outcome: {} }))).toEqual({ _tag: "HostOwn" })
    // A reload within the recorded session (run --watch) is the host's own record too, not a call to re-decide.
    expect(planOf(rec({ event: "reload", outcome: { kept: [], restarted: [], removed: [], added: ["x"] } }))).toEqual({
      _tag: "HostOwn"
    })
  })

  it("records fall into sessions: a session_start begins one, even under an id seen before; seq orders each", () => {
    const r = (seq: number, session_id: string, event = "tool_call") =>
      rec({ seq, session_id, event, outcome: {}, where: `${session_id}:${seq}` })
    const sessions = sessionsOf([
      r(0, "a", "session_start"),
      r(2, "a"),
      r(1, "a"),
      r(0, "b"),
      r(0, "a", "session_start"),
      r(1, "a")
    ])
    expect(sessions.map((s) => [s.sessionId, s.records.map((x) => x.seq)])).toEqual([
      ["a", [0, 1, 2]],
      ["b", [0]],
      ["a", [0, 1]]
    ])
  })

  it("reads a line as abhed-ext audit does: blank lines are none, a bad one says where and why", () => {
    const line = {
      seq: 3,
      session_id: "s",
      time: "2026-01-01T00:00:00.000Z",
      event: "tool_call",
      call_id: "c-1",
      tool: "bash",
      args: { command: "ls" },
      rounds: [{ round: 1, exchanges: [{ extension: "g", status: "some_new_status", latency_ms: 2 }] }],
      outcome: { decision: "allow", reasons: [] },
      notes: [],
      duration_ms: 4
    }
    expect(readRecord("a.jsonl", 1, "  ")).toBeUndefined()
    const read = readRecord("a.jsonl", 2, JSON.stringify(line))
    expect(read !== undefined && Result.isSuccess(read) ? read.success : read).toMatchObject({
      where: "a.jsonl:2",
      seq: 3,
      call_id: "c-1",
      rounds: line.rounds
    })
    expect(readRecord("a.jsonl", 3, "{oops")).toEqual(
      Result.fail({ where: "a.jsonl:3", problem: expect.stringMatching(/^not JSON \(/) })
    )
    const { time: _, ...untimed } = line
    expect(readRecord("a.jsonl", 4, JSON.stringify(untimed))).toEqual(
      Result.fail({ where: "a.jsonl:4", problem: expect.stringMatching(/^not an audit record: .*time/) })
    )
  })
})

describe("test: JUnit escaping", () => {
  it("escapes markup everywhere, line breaks in attributes, and writes out what XML cannot hold", () => {
    expect(escapeXml(`<a href="x">&'`)).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&apos;")
    expect(escapeXml("a\nb")).toBe("a&#10;b")
    expect(escapeXml("a\nb", false)).toBe("a\nb")
    expect(escapeXml("\u0000\u001b\ud800 \uffff é 😀")).toBe("\\u{0}\\u{1b}\\u{d800} \\u{ffff} é 😀")
  })
})
