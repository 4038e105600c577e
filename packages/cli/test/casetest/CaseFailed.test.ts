import type { AuditRecord } from "@abhed/host/AuditLog"
import { describe, expect, it } from "vitest"
import { withFailures } from "../../src/casetest/CaseCheck.ts"

/** `abhed-ext test`: a case a guard answered `failed` on is no pass of that guard (docs/audit.md). */

const record: AuditRecord = {
  seq: 1,
  session_id: "s",
  time: "2026-01-01T00:00:00.000Z",
  event: "tool_call",
  call_id: "c-1",
  tool: "bash",
  args: {},
  rounds: [
    {
      round: 1,
      exchanges: [
        { extension: "guard", status: "failed", latency_ms: 1, error: "failed (the extension could not answer)" }
      ]
    }
  ],
  outcome: { decision: "deny", reasons: [] },
  notes: [],
  duration_ms: 1
}
const denied = { passed: true, expected: "deny", came: "deny", problems: [] }

describe("a case answered failed", () => {
  it("fails, though its on_failure gave the expected deny; passes when the case names the guard in failing", () => {
    expect(withFailures(denied, record)).toEqual({
      ...denied,
      passed: false,
      problems: ["guard did not answer (failed (the extension could not answer)): its on_failure decided for it"]
    })
    expect(withFailures(denied, record, ["guard"])).toEqual({ ...denied, expected: "deny, guard failing" })
  })
})
