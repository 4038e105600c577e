import { describe, expect, it } from "vitest"
import { isBadLine, readLine } from "../../src/audit/AuditEntry.ts"
import { reportBuilder } from "../../src/audit/ReportData.ts"

/** The data of `abhed-ext audit --html` (docs/cli.md). */

const line = (seq: number, exchange: object) =>
  JSON.stringify({
    seq,
    session_id: "s",
    time: `2026-01-01T00:00:0${seq}.000Z`,
    event: "tool_call",
    call_id: `c-${seq}`,
    tool: "bash",
    args: {},
    rounds: [{ round: 1, exchanges: [{ extension: "guard", latency_ms: 1, ...exchange }] }],
    outcome: { decision: "deny", reasons: [] },
    notes: [],
    duration_ms: 1
  })

describe("audit --html data", () => {
  it("a reply that says failed counts as a failure, not as a death, and does not hide the death after it", () => {
    const report = reportBuilder(["a.jsonl"])
    const texts = [
      line(1, { status: "failed", error: "failed (the extension could not answer)" }),
      line(2, { status: "exited", error: "exited (code 3)" })
    ]
    texts.forEach((text, i) => {
      const entry = readLine("a.jsonl", i + 1, text)
      if (isBadLine(entry)) throw new Error(entry.problem)
      report.add(entry)
    })
    const data = report.finish([])
    expect(data.extensions.map((x) => [x.name, x.failures])).toEqual([["guard", 2]])
    expect(data.deaths.map((d) => [d.extension, d.status, d.error])).toEqual([["guard", "exited", "exited (code 3)"]])
  })
})
