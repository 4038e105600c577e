import { describe, expect, it } from "vitest"
import { isBadLine, readLine } from "../../src/audit/AuditEntry.ts"
import { renderEntry } from "../../src/audit/AuditText.ts"
import { plain } from "../../src/Style.ts"

/** `abhed-ext audit`'s text (docs/audit.md). */

describe("audit text", () => {
  it("a reply that says failed: its status, the host's error, and the fields beside it that were ignored", () => {
    const entry = readLine(
      "a.jsonl",
      1,
      JSON.stringify({
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
              {
                extension: "guard",
                status: "failed",
                latency_ms: 1,
                error: "failed (the extension could not answer)",
                ignored: ["block", "x\u001b[2J"]
              }
            ]
          }
        ],
        outcome: { decision: "deny", reasons: [] },
        notes: [],
        duration_ms: 1
      })
    )
    if (isBadLine(entry)) throw new Error(entry.problem)
    expect(renderEntry(entry, plain)).toMatch(
      /guard +1 ms {2}FAILED: failed \(the extension could not answer\) \(ignored: block, x\\x1b\[2J\)$/m
    )
  })
})
