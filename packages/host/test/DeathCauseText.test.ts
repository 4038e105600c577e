import { describe, expect, it } from "vitest"
import { describeDeathCause, describeDeathCauseWithStderr } from "../src/ExtensionError.ts"

/** The operator's line for a death says what to do when the cause is the commonest first mistake. */
describe("describeDeathCauseWithStderr", () => {
  it("a line on stdout that is not JSON (a debug print): says where logs belong", () => {
    const hint = " (stdout carries replies only: a log or debug line belongs on stderr)"
    expect(describeDeathCauseWithStderr({ _tag: "unsolicited_output", detail: "(invalid JSON, 17 bytes)" })).toBe(
      `unsolicited_output: (invalid JSON, 17 bytes)${hint}`
    )
    expect(
      describeDeathCauseWithStderr({
        _tag: "malformed_reply",
        detail: "reply: expected one JSON object per line, got invalid JSON"
      })
    ).toBe(`malformed_reply: reply: expected one JSON object per line, got invalid JSON${hint}`)
  })

  it("a reply that never came: a hung handler, or a reply left in the stdout buffer (python on a pipe)", () => {
    expect(describeDeathCauseWithStderr({ _tag: "timed_out", timeout_ms: 5000 })).toBe(
      "timed_out (5000 ms) (no reply in time: a handler that hangs, or a reply left in its stdout buffer: flush after each reply)"
    )
    expect(describeDeathCause({ _tag: "timed_out", timeout_ms: 5000 })).toBe("timed_out (5000 ms)")
  })

  it("not for other causes, and never in the cause itself (the audit's, the model's notes)", () => {
    expect(describeDeathCauseWithStderr({ _tag: "unsolicited_output", detail: '{"id":"3"}' })).toBe(
      'unsolicited_output: {"id":"3"}'
    )
    expect(describeDeathCauseWithStderr({ _tag: "exited", code: 3, signal: null })).toBe("exited (code 3)")
    expect(describeDeathCause({ _tag: "unsolicited_output", detail: "(invalid JSON, 17 bytes)" })).toBe(
      "unsolicited_output: (invalid JSON, 17 bytes)"
    )
  })
})
