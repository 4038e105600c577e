import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { MaxJsonDepth, nestedDeeperThan } from "@abhed/protocol"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { configFile, tempDir } from "../support/replay-extensions.ts"

/**
 * An audit file written by an attacker, nested deeper than any record the host writes: `audit` (text and HTML) and
 * `replay` name the line and go on, as for any line that is not a record, rather than overflow the stack walking it
 * (a stack trace, and nothing else read). The deepest record the host can write still reads.
 */

const record = (seq: number, event: string, extra: object = {}) =>
  JSON.stringify({
    seq,
    session_id: "s",
    time: "2026-12-01T19:34:26.250Z",
    event,
    rounds: [],
    outcome: {},
    notes: [],
    duration_ms: 1,
    ...extra
  })

/** `{"x": [[…]]}`, nesting `depth` levels in all. */
const nested = (depth: number): { readonly x: unknown } => {
  let value: unknown = []
  for (let i = 2; i < depth; i++) value = [value]
  return { x: value }
}

/** A tool call whose args nest `depth` levels, denied, with a reply echoing them in its round. */
const call = (seq: number, depth: number) => {
  const args = nested(depth)
  return record(seq, "tool_call", {
    call_id: `c${seq}`,
    tool: "bash",
    args,
    rounds: [
      { round: 1, exchanges: [{ extension: "g", status: "replied", latency_ms: 1, reply: { block: true, args } }] }
    ],
    outcome: { decision: "deny", reasons: [{ extension: "g", reason: "no" }], args }
  })
}

/** `call`, nesting `depth` levels: written as text (JSON.stringify would overflow the stack here too). */
const deepCall = (seq: number, depth: number) =>
  call(seq, 2).replaceAll('{"x":[]}', `{"x":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`)

const auditFile = (): string => {
  // The deepest args the host sends (a request nests at most MaxJsonDepth levels, args one level down).
  expect(nestedDeeperThan(nested(MaxJsonDepth - 1), MaxJsonDepth - 1)).toBe(false)
  const file = join(tempDir(), "audit.jsonl")
  writeFileSync(
    file,
    `${[record(0, "session_start"), call(1, MaxJsonDepth - 1), deepCall(2, 100_000), call(3, 3)].join("\n")}\n`
  )
  return file
}

const problem = "not an audit record: nested more than"

describe.concurrent("an audit nested deeper than the host writes", () => {
  it("audit: names the line and shows the others", async () => {
    const r = await runCli(["audit", auditFile()])
    expect(r.stderr).not.toContain("RangeError")
    expect(r.stderr).toMatch(new RegExp(`audit\\.jsonl:3: ${problem} \\d+ levels deep`))
    expect(r.stdout).toContain("3 of 3 records shown")
    expect(r.code).toBe(1)
  }, 120_000)

  it("audit --html: names the line and writes the page of the others", async () => {
    const out = join(tempDir(), "report.html")
    const r = await runCli(["audit", auditFile(), "--html", out])
    expect(r.stderr).not.toContain("RangeError")
    expect(r.stderr).toContain(`audit.jsonl:3: ${problem}`)
    expect(r.stderr).toContain("3 of 3 records")
    expect(r.code).toBe(1)
  }, 120_000)

  it("replay: the deep line is malformed, the others are replayed", async () => {
    const r = await runCli(["replay", "--json", "-c", configFile([]), auditFile()])
    expect(r.stderr).not.toContain("RangeError")
    const report = JSON.parse(r.stdout) as {
      summary: { replayed: number; looser: number; malformed: number }
      malformed: ReadonlyArray<{ where: string; problem: string }>
    }
    expect(report.summary).toMatchObject({ replayed: 2, looser: 2, malformed: 1 })
    expect(report.malformed[0]?.problem).toContain(problem)
    expect(r.code).toBe(1)
  }, 120_000)
})
