import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { AuditRecord } from "../src/AuditRecord.ts"
import { HomeTextMax, homeTexts, QuoteMin, requestTexts, unquoted } from "../src/TelemetryQuotes.ts"

/** What leaves of a reason: its own words, never a run of QuoteMin chars of what stays home. */

const record = (fields: Partial<AuditRecord>): AuditRecord => ({
  seq: 1,
  session_id: "s",
  time: "2026-12-02T00:00:00.000Z",
  event: "tool_call",
  call_id: "c1",
  rounds: [],
  outcome: {},
  notes: [],
  duration_ms: 1,
  ...fields
})

describe("unquoted", () => {
  it("cuts every quote of QuoteMin chars or more, whole or part of a value, and keeps the words around it", () => {
    const texts = ["rm -rf /home/alice/project", "cd /repo && git push --force origin main"]
    expect(unquoted("blocked: `rm -rf /home/alice/project` deletes files", texts)).toBe("blocked: `[…]` deletes files")
    // The space before each quote is in the value too (" git push"): the longest shared run goes.
    expect(unquoted("asks before git push --force origin main, twice: git push --force", texts)).toBe(
      "asks before[…], twice:[…]"
    )
    // Runs shorter than QuoteMin are kept: as likely chance as a quote.
    expect(unquoted("rm -rf is not allowed", texts)).toBe("rm -rf is not allowed")
    expect(unquoted("git push is not allowed", ["x".repeat(QuoteMin)])).toBe("git push is not allowed")
    expect(unquoted("no quote at all, only words", texts)).toBe("no quote at all, only words")
    expect(unquoted("", texts)).toBe("")
  })

  it("too much home text to compare: the reason does not leave", () => {
    expect(unquoted("blocked", undefined)).toBeUndefined()
  })

  it("property: no run of QuoteMin chars of a home text survives, wherever it is put in a reason", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: QuoteMin, maxLength: 200 }),
        fc.nat(),
        fc.nat(),
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 40 }),
        (text, a, b, before, after) => {
          const start = a % (text.length - QuoteMin + 1)
          const length = QuoteMin + (b % (text.length - start - QuoteMin + 1))
          const quote = text.slice(start, start + length)
          const out = unquoted(`${before}${quote}${after}`, [text])
          expect(out).toBeDefined()
          expect(out?.includes(quote)).toBe(false)
          for (let i = 0; i + QuoteMin <= (out?.length ?? 0); i++)
            expect(text.includes(out?.slice(i, i + QuoteMin) ?? "")).toBe(false)
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("homeTexts", () => {
  const rec = record({
    args: { command: "rm -rf /home/alice/project", n: 3 },
    outcome: {
      decision: "deny",
      args: { command: "sandbox-run rm -rf x" },
      reasons: [{ extension: "g", reason: "the reason itself, not home" }]
    },
    rounds: [
      {
        round: 1,
        exchanges: [
          {
            extension: "r",
            status: "replied",
            latency_ms: 1,
            reply: { args: { command: "a proposed rewrite" }, reason: "a reply's reason, not home" }
          }
        ]
      }
    ]
  })

  it("the args unless exported in full, the outcome and what was proposed; never the reasons themselves", () => {
    expect(homeTexts(rec, "digest")).toEqual([
      "rm -rf /home/alice/project",
      "sandbox-run rm -rf x",
      "a proposed rewrite"
    ])
    expect(homeTexts(rec, "full")).toEqual(["sandbox-run rm -rf x", "a proposed rewrite"])
  })

  it("past HomeTextMax there is nothing to compare with: undefined", () => {
    expect(homeTexts(record({ args: { big: "x".repeat(HomeTextMax + 1) } }), "digest")).toBeUndefined()
    expect(requestTexts({ content: "y".repeat(HomeTextMax + 1) }, {})).toBeUndefined()
  })

  it("a hook's run: every string of the request, and of the reply but its reason", () => {
    expect(
      requestTexts({ event: "tool_result", content: "the tool's whole output" }, { reason: "own words here" })
    ).toEqual(["tool_result", "the tool's whole output"])
  })
})
