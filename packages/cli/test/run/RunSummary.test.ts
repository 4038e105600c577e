import type { AuditRecord } from "@abhed/host/AuditLog"
import { describe, expect, it } from "vitest"
import * as RunSummary from "../../src/run/RunSummary.ts"

/** `run --summary` and `--strict` read from the audit records (docs/cli.md). */

const record = (exchanges: AuditRecord["rounds"][number]["exchanges"]): AuditRecord => ({
  seq: 1,
  session_id: "s",
  time: "2026-01-01T00:00:00.000Z",
  event: "tool_call",
  call_id: "c-1",
  tool: "bash",
  args: {},
  rounds: [{ round: 1, exchanges }],
  outcome: {},
  notes: [],
  duration_ms: 1
})

const config = { extensions: [{ name: "guard" }] } as unknown as Parameters<typeof RunSummary.make>[0]

describe("RunSummary", () => {
  it("a reply that says failed is no death: the extension is live, the requests it could not answer are counted, --strict names them", () => {
    const tally = RunSummary.make(config)
    const failed = {
      extension: "guard",
      status: "failed",
      latency_ms: 1,
      error: "failed (the extension could not answer)"
    } as const
    RunSummary.addRecord(tally, record([failed]))
    RunSummary.addRecord(tally, record([failed]))
    RunSummary.addRecord(tally, record([{ extension: "guard", status: "replied", latency_ms: 2, reply: {} }]))
    expect(RunSummary.render(tally).split("\n")[1]).toBe(
      "  guard  live; 1 reply, p50 2 ms, p99 2 ms; could not answer 2 request(s) (its on_failure answered)"
    )
    expect(RunSummary.strictProblem(tally)).toBe("guard could not answer 2 request(s)")
  })

  it("a death is still a death", () => {
    const tally = RunSummary.make(config)
    RunSummary.addRecord(
      tally,
      record([{ extension: "guard", status: "exited", latency_ms: 1, error: "exited (code 3)" }])
    )
    expect(RunSummary.render(tally).split("\n")[1]).toBe("  guard  DEAD: exited (code 3); no replies")
    expect(RunSummary.strictProblem(tally)).toBe("guard died (exited (code 3))")
  })
})
