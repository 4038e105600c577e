import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { AuditRecord } from "../src/AuditRecord.ts"
import { HomeTextMax, homeTexts, QuoteMin, requestTexts, unquoted } from "../src/TelemetryQuotes.ts"
import { leaving, ReasonMax, ScrubMax } from "../src/TelemetryRecord.ts"

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

/** This thread's CPU (user + system, ms) for `f`: the least of `times` runs. */
const cpuOf = (f: () => unknown, times = 3): number => {
  let least = Number.POSITIVE_INFINITY
  for (let i = 0; i < times; i++) {
    const before = process.threadCpuUsage()
    f()
    const used = process.threadCpuUsage(before)
    least = Math.min(least, (used.user + used.system) / 1000)
  }
  return least
}

describe("what a careless reason quotes, however it quotes it", () => {
  it("the args' JSON text, as JSON.stringify and Python's json.dumps write it: short lines and quotes leave none of it", () => {
    // No line of it is QuoteMin chars: only its escaped form, as the reason holds it, is a quote.
    const args = { env: 'A=1\nB="2"\nKEY=k3y\nD=4', name: "café-crème-brûlée" }
    const texts = homeTexts(record({ args }), "digest")
    const js = unquoted(`saw ${JSON.stringify(args)}`, texts)
    expect(js).toBe('saw {"env":"[…]","name":"[…]"}')
    const python = `saw {"env": "A=1\\nB=\\"2\\"\\nKEY=k3y\\nD=4", "name": "caf\\u00e9-cr\\u00e8me-br\\u00fbl\\u00e9e"}`
    expect(unquoted(python, texts)).toBe('saw {"env": "[…]", "name": "[…]"}')
  })

  it("an argv as the command line it makes, short values with their keys: a quote that spans several values", () => {
    const texts = homeTexts(
      record({ args: { argv: ["git", "push", "--force", "origin", "main"], opts: { path: "/etc/x", mode: "rw" } } }),
      "digest"
    )
    expect(unquoted("blocked: git push --force origin main", texts)).toBe("blocked: […]")
    expect(unquoted("would write path=/etc/x mode=rw", texts)).toBe("would write […]")
    // As JSON.stringify and json.dumps write them.
    expect(unquoted('blocked: {"path":"/etc/x","mode":"rw"}', texts)).toBe("blocked: {[…]}")
    expect(unquoted('blocked: {"path": "/etc/x", "mode": "rw"}', texts)).toBe("blocked: {[…]}")
    expect(unquoted('argv ["git", "push", "--force", "origin", "main"]', texts)).toBe("argv [[…]]")
    // As Python prints a list or a dict (f"blocked: {args}").
    expect(unquoted("argv ['git', 'push', '--force', 'origin', 'main']", texts)).toBe("argv [[…]]")
    expect(unquoted("blocked: {'path': '/etc/x', 'mode': 'rw'}", texts)).toBe("blocked: {[…]}")
    // A value that is short alone is kept, as any short overlap is.
    expect(unquoted("no git today", texts)).toBe("no git today")
  })

  it("a reason that quotes indented code or a rule of dashes costs a pass over the text, not a pass per place in the reason", () => {
    const code = `function f() {\n${" ".repeat(16)}return x\n}\n`.repeat(6000)
    const recurring = `saw: ${code.slice(0, ScrubMax - 5)}`
    // The same length of reason whose windows are all different (and none in the text): one pass over it.
    const distinct = Array.from({ length: ScrubMax }, (_, i) => String.fromCharCode(0x4e00 + i)).join("")
    expect(unquoted(recurring, [code])).toBe("saw: […]")
    expect(unquoted(distinct, [code])).toBe(distinct)
    const a = cpuOf(() => unquoted(recurring, [code]))
    const b = cpuOf(() => unquoted(distinct, [code]))
    // Quadratic, the recurring one took ~45 ms per window of the reason: seconds, against ~0.1 s.
    expect(a).toBeLessThan(5 * b + 50)
  })

  it("a reason of megabytes: only its first ScrubMax chars are compared, and what leaves is bounded", () => {
    const text = "the tool's output, which stays home"
    const huge = `${"word ".repeat(800_000)}${text}`
    const texts = () => [text]
    const out = leaving(huge, texts)
    expect(out?.length).toBe(ReasonMax)
    expect(out?.endsWith("…")).toBe(true)
    expect(leaving(`blocked: ${text}`, texts)).toBe("blocked: […]")
    const a = cpuOf(() => leaving(huge, texts))
    const b = cpuOf(() => leaving(huge.slice(0, ScrubMax), texts))
    expect(a).toBeLessThan(5 * b + 50)
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

  it("the args as the record and its outcome both hold them count once against HomeTextMax", () => {
    const command = "y".repeat(HomeTextMax * 0.75)
    const texts = homeTexts(record({ args: { command }, outcome: { decision: "deny", args: { command } } }), "digest")
    expect(texts).toEqual([command])
    expect(unquoted(`blocked: ${command.slice(0, 40)}`, texts)).toBe("blocked: […]")
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
