import { checkCall, checkResult, withFailures } from "@abhed/cli/casetest/CaseCheck"
import { escapeXml, renderJUnit } from "@abhed/cli/casetest/JUnit"
import { decodeCase } from "@abhed/cli/casetest/TestCase"
import type { ReadRecord } from "@abhed/cli/replay/AuditInput"
import { compareCall, compareContext, compareResult } from "@abhed/cli/replay/ReplayCompare"
import { renderText } from "@abhed/cli/replay/ReplayReport"
import { plain } from "@abhed/cli/Style"
import type { AuditRecord, AuditRound } from "@abhed/host"
import { Result } from "effect"
import { readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { fixture, fixtureCommand, Patient } from "../support/extension-helpers.ts"
import { configFile, guard, tempDir } from "../support/replay-extensions.ts"

/**
 * Attacks on what shows a user what their guards decide: `abhed-ext test` must never report a pass that is not one
 * (a guard that failed answered with its on_failure, not its judgement), and `replay` must never call a decision
 * unchanged when who made it changed.
 */

/** Each real-process test starts node or python processes: a generous bound, never reached unless something hangs. */
const Slow = 240_000

const replied = (extension: string, reply: unknown) => ({ extension, status: "replied" as const, latency_ms: 1, reply })

const record = (event: string, rounds: ReadonlyArray<AuditRound>): AuditRecord => ({
  seq: 0,
  session_id: "s",
  time: "",
  event,
  call_id: "c",
  rounds,
  outcome: {},
  notes: [],
  duration_ms: 0
})

const read = (over: Partial<ReadRecord> & Pick<ReadRecord, "event" | "outcome">): ReadRecord => ({
  where: "a.jsonl:1",
  seq: 0,
  session_id: "s",
  call_id: "c",
  tool: "bash",
  args: { command: "cat .env" },
  rounds: [],
  notes: [],
  ...over
})

describe("abhed-ext test: a guard that did not answer never passes a case", () => {
  const passed = { passed: true, expected: "deny by guard", came: "deny (guard: …)", problems: [] }

  it("a timed-out, exited or dead exchange fails the case, naming the extension and why; replies pass", () => {
    const timedOut = record("tool_call", [
      {
        round: 1,
        exchanges: [
          { extension: "guard", status: "timed_out", latency_ms: 10, error: "timed_out (500 ms)" },
          { extension: "other", status: "not_subscribed", latency_ms: 0 }
        ]
      }
    ])
    expect(withFailures(passed, timedOut)).toMatchObject({
      passed: false,
      problems: ["guard did not answer (timed_out (500 ms)): its on_failure decided for it"]
    })
    const dead = record("tool_call", [
      { round: 1, exchanges: [{ extension: "guard", status: "dead", latency_ms: 0, error: "exited (code 7)" }] }
    ])
    expect(withFailures(passed, dead).problems).toEqual([
      "guard did not answer (dead: exited (code 7)): its on_failure decided for it"
    ])
    expect(withFailures(passed, record("tool_call", [{ round: 1, exchanges: [replied("guard", {})] }]))).toEqual(passed)
  })

  it(
    "a guard that crashed under on_failure deny: the deny it expects still comes, and each case FAILs; exit 1",
    async () => {
      const dir = tempDir()
      const cases = join(dir, "cases.jsonl")
      writeFileSync(
        cases,
        [
          '{"name":"rm is denied","call":{"tool":"bash","args":{"command":"rm -rf /"}},"expect":"deny","by":"guard"}',
          '{"name":"ls is denied too","call":{"tool":"bash","args":{"command":"ls"}},"expect":"deny"}',
          ""
        ].join("\n")
      )
      const crash = {
        name: "guard",
        ...fixtureCommand("ext-crash.py"),
        args: [...fixtureCommand("ext-crash.py").args, fixture("ext-crash.py")],
        events: ["tool_call"],
        on_failure: "deny",
        ...Patient
      }
      const r = await runCli(["test", "-c", configFile([crash]), cases])
      expect(r.stdout).toContain(`FAIL ${cases}:1 rm is denied`)
      expect(r.stdout).toContain("- guard did not answer (exited (code 7)): its on_failure decided for it")
      expect(r.stdout).toContain(`FAIL ${cases}:2 ls is denied too`)
      expect(r.stdout).toContain("- guard did not answer (dead: exited (code 7)): its on_failure decided for it")
      expect(r.stdout).toContain("2 cases: 0 passed, 2 failed")
      expect(r.code).toBe(1)
    },
    Slow
  )

  it(
    "a guard that answers passes as before (the check reads only failed exchanges)",
    async () => {
      const cases = join(tempDir(), "cases.jsonl")
      writeFileSync(cases, '{"call":{"tool":"bash","args":{"command":"rm -rf /"}},"expect":"deny","by":"guard"}\n')
      const r = await runCli(["test", "-c", configFile([guard]), cases])
      expect(r.stdout).toContain("1 case: 1 passed, 0 failed")
      expect(r.code).toBe(0)
    },
    Slow
  )
})

describe("replay: who decided is part of the decision", () => {
  it("a call: the same args rewritten by another extension is changed, not unchanged", () => {
    const rewritten = { decision: "allow", reasons: [], args: { command: "cat .env.example" }, rounds: 2 }
    const before = read({ event: "tool_call", outcome: { ...rewritten, rewrittenBy: ["redactor"] } })
    expect(compareCall(before, { ...rewritten, decision: "allow", rewrittenBy: ["impostor"] })).toMatchObject({
      kind: "changed",
      by: ["impostor", "redactor"]
    })
    expect(compareCall(before, { ...rewritten, decision: "allow", rewrittenBy: ["redactor"] })).toMatchObject({
      kind: "unchanged"
    })
  })

  it("a result: the same content and is_error from another extension is changed", () => {
    const input = { content: "KEY=AKIA", isError: false }
    const before = read({
      event: "tool_result",
      outcome: { content: "KEY=AKIA", is_error: true, rounds: 1 },
      input: { content: "KEY=AKIA", is_error: false },
      rounds: [{ round: 1, exchanges: [replied("guard", { is_error: true })] }]
    })
    const outcome = { content: "KEY=AKIA", is_error: true, rounds: 1 }
    expect(
      compareResult(
        before,
        input,
        outcome,
        record("tool_result", [{ round: 1, exchanges: [replied("other", { is_error: true })] }])
      )
    ).toMatchObject({ kind: "changed", by: ["guard", "other"] })
    expect(
      compareResult(
        before,
        input,
        outcome,
        record("tool_result", [{ round: 1, exchanges: [replied("guard", { is_error: true })] }])
      )
    ).toMatchObject({ kind: "unchanged" })
  })

  it("a context: the same keep from another filter, or withheld by another, is changed (never stricter)", () => {
    const before = read({
      event: "context",
      outcome: { keep: [0], messages: ["a"], withheld: [] },
      input: { messages: ["a", "b"] },
      rounds: [{ round: 1, exchanges: [replied("filter", { keep: [0] })] }]
    })
    const kept = { keep: [0], messages: ["a"], withheld: [] }
    expect(
      compareContext(before, 2, kept, record("context", [{ round: 1, exchanges: [replied("other", { keep: [0] })] }]))
    ).toMatchObject({ kind: "changed", by: ["filter", "other"] })
    const withheld = read({
      event: "context",
      outcome: {
        keep: [],
        messages: [],
        withheld: [{ extension: "gate", reason: "extension gate unavailable: exited" }]
      },
      rounds: [{ round: 1, exchanges: [{ extension: "gate", status: "exited", latency_ms: 1 }] }]
    })
    expect(
      compareContext(
        withheld,
        2,
        { keep: [], messages: [], withheld: [{ extension: "sentry", reason: "extension sentry unavailable: exited" }] },
        record("context", [{ round: 1, exchanges: [{ extension: "sentry", status: "exited", latency_ms: 1 }] }])
      )
    ).toMatchObject({ kind: "changed", by: ["gate", "sentry"] })
  })
})

describe("replay's text and test's problems: a difference is never cut away, nor a report flooded", () => {
  const head = "x".repeat(100_000)

  it("replay: long args that differ past the cut are cut around the difference on both sides", () => {
    const before = read({
      event: "tool_call",
      outcome: { decision: "allow", reasons: [], args: { command: `${head} safe` }, rounds: 2, rewrittenBy: ["r"] }
    })
    const comparison = compareCall(before, {
      decision: "allow",
      reasons: [],
      args: { command: `${head} rm -rf /` },
      rounds: 2,
      rewrittenBy: ["r"]
    })
    expect(comparison?.kind).toBe("changed")
    if (comparison === undefined) return
    const text = renderText(
      {
        config: "new.json",
        replayed: [
          { where: "a.jsonl:1", session_id: "s", seq: 0, event: "tool_call", call_id: "c", tool: "bash", comparison }
        ],
        notReplayable: [],
        malformed: []
      },
      plain
    )
    const [, shownBefore = "", shownAfter = ""] = text.split("\n")
    expect(shownBefore).toMatch(/^ {2}before: …x{39} safe"\}, rewritten by r \(\d+ chars, from char \d+\)$/)
    expect(shownAfter).toMatch(/^ {2}after: {2}…x{39} rm -rf \/"\}, rewritten by r \(\d+ chars, from char \d+\)$/)
  })

  it("test: settled args or content that differ past the cut are cut around the difference", () => {
    const call = checkCall(
      {
        kind: "call",
        name: undefined,
        tool: "bash",
        args: { command: "a" },
        callId: undefined,
        expect: "allow",
        by: [],
        settled: { command: `${head} safe` },
        failing: []
      },
      { decision: "allow", reasons: [], args: { command: `${head} rm -rf /` }, rounds: 1, rewrittenBy: [] }
    )
    expect(call.problems).toHaveLength(1)
    expect(call.problems[0]).toMatch(
      /^expected args …x{39} safe"\} \(\d+ chars, from char \d+\), got …x{39} rm -rf \/"\} \(\d+ chars, from char \d+\)$/
    )
    const result = checkResult(
      {
        kind: "tool_result",
        name: undefined,
        tool: "bash",
        args: {},
        content: "in",
        isError: false,
        callId: undefined,
        expectContent: `${head} [redacted]`,
        expectIsError: undefined,
        by: [],
        failing: []
      },
      { content: `${head} AKIA`, is_error: false, rounds: 1 },
      undefined
    )
    expect(result.problems[0]).toMatch(
      /^expected content "…x{39} \[redacted\] \(\d+ chars, from char \d+\)", got "…x{39} AKIA \(\d+ chars, from char \d+\)"$/
    )
  })
})

describe("JUnit: whitespace a conforming parser would change is kept as references", () => {
  it("a tab in an attribute (normalized to a space) and a carriage return anywhere (read as a line feed)", () => {
    expect(escapeXml("a\tb")).toBe("a&#9;b")
    expect(escapeXml("a\r\nb")).toBe("a&#13;&#10;b")
    expect(escapeXml("a\tb\r\nc", false)).toBe("a\tb&#13;\nc")
    const xml = renderJUnit([
      {
        name: "cases.jsonl",
        timestamp: "t",
        seconds: 0,
        cases: [
          {
            name: "cases.jsonl:1 tab\there",
            classname: "cases.jsonl",
            seconds: 0,
            failure: { message: "m", type: "mismatch", detail: "came: deny (guard: line one\r\nline two)" }
          }
        ]
      }
    ])
    expect(xml).toContain('name="cases.jsonl:1 tab&#9;here"')
    expect(xml).toContain("(guard: line one&#13;\nline two)</failure>")
  })
})

describe("replay: an extension that does not answer in the replay is said, changed or not", () => {
  it(
    "a guard that crashes under on_failure ignore: the deny it recorded reads looser, with why; the allow it recorded is listed; exit 1 even when nothing changed",
    async () => {
      const dir = tempDir()
      const events = join(dir, "events.jsonl")
      writeFileSync(
        events,
        [
          '{"event":"tool_call","call_id":"c-1","tool":"bash","args":{"command":"rm -rf /"}}',
          '{"event":"tool_call","call_id":"c-2","tool":"bash","args":{"command":"ls"}}',
          ""
        ].join("\n")
      )
      const audit = join(dir, "audit.jsonl")
      const recorded = await runCli(["run", "-c", configFile([guard]), "--audit", audit, events])
      expect(recorded.code).toBe(0)
      const crash = {
        name: "guard",
        ...fixtureCommand("ext-crash.py"),
        args: [...fixtureCommand("ext-crash.py").args, fixture("ext-crash.py")],
        events: ["tool_call"],
        on_failure: "ignore",
        ...Patient
      }
      const config = configFile([crash])
      const r = await runCli(["replay", "-c", config, audit])
      const lines = r.stdout.trimEnd().split("\n")
      expect(lines).toEqual([
        `looser ${audit}:3 tool_call c-1 bash (session abhed-ext) by guard`,
        '  before: deny (guard: rm -rf is not permitted here), args {"command":"rm -rf /"}',
        '  after:  allow, args {"command":"rm -rf /"}',
        "  guard did not answer (exited (code 7)): its on_failure decided for it",
        "decided in part by on_failure (an extension did not answer):",
        `  ${audit}:3 tool_call c-1 (looser): guard did not answer (exited (code 7))`,
        `  ${audit}:4 tool_call c-2 (unchanged): guard did not answer (dead: exited (code 7))`,
        `replayed 2 events under ${config}: 0 stricter, 1 looser (guard: 1), 0 changed, 1 unchanged; 0 not replayable; 2 decided in part by on_failure`
      ])
      expect(r.code).toBe(1)
      const json = await runCli(["replay", "-c", config, "--json", audit])
      const report = JSON.parse(json.stdout)
      expect(report.summary.unanswered).toBe(2)
      expect(report.changes[0].failed).toEqual(["guard did not answer (exited (code 7))"])
      expect(report.unanswered.map((u: { change: string }) => u.change)).toEqual(["looser", "unchanged"])
      // Nothing changed, but the guard never judged: a gate cannot vouch for that.
      const lsOnly = join(dir, "ls.jsonl")
      writeFileSync(lsOnly, '{"event":"tool_call","call_id":"c-2","tool":"bash","args":{"command":"ls"}}\n')
      const lsAudit = join(dir, "ls-audit.jsonl")
      expect((await runCli(["run", "-c", configFile([guard]), "--audit", lsAudit, lsOnly])).code).toBe(0)
      const unchanged = await runCli(["replay", "-c", config, "--fail-on", "looser", lsAudit])
      expect(unchanged.stdout).toContain("0 changed, 1 unchanged; 0 not replayable; 1 decided in part by on_failure")
      expect(unchanged.stderr).toContain("1 event was decided in part by on_failure (an extension did not answer)")
      expect(unchanged.code).toBe(1)
    },
    Slow
  )
})

describe("abhed-ext test --junit: never over what the run reads", () => {
  it(
    "the cases file or the config (by another name too) as --junit: exit 64, the file as it was",
    async () => {
      const dir = tempDir()
      const cases = join(dir, "cases.jsonl")
      const text = '{"call":{"tool":"bash","args":{"command":"ls"}},"expect":"allow"}\n'
      writeFileSync(cases, text)
      const config = configFile([guard])
      const configText = readFileSync(config, "utf8")
      const link = join(dir, "link.json")
      symlinkSync(config, link)
      const overCases = await runCli(["test", "-c", config, cases, "--junit", cases])
      expect(overCases.code).toBe(64)
      expect(overCases.stderr).toContain(`--junit ${cases} is the cases file: the report would overwrite it`)
      const overConfig = await runCli(["test", "-c", config, cases, "--junit", link])
      expect(overConfig.code).toBe(64)
      expect(overConfig.stderr).toContain(`--junit ${link} is the config file`)
      expect(readFileSync(cases, "utf8")).toBe(text)
      expect(readFileSync(config, "utf8")).toBe(configText)
    },
    Slow
  )
})

describe("abhed-ext audit --html: never over an audit it reports on", () => {
  it(
    "an audit file (by another name too) as --html: exit 64, the audit as it was",
    async () => {
      const dir = tempDir()
      const audit = join(dir, "audit.jsonl")
      const line = JSON.stringify({
        seq: 0,
        session_id: "s",
        time: "2026-12-01T10:00:00.000Z",
        event: "tool_call",
        call_id: "c-1",
        tool: "bash",
        args: { command: "ls" },
        rounds: [],
        outcome: { decision: "allow", reasons: [], args: { command: "ls" }, rounds: 1 },
        notes: [],
        duration_ms: 1
      })
      writeFileSync(audit, `${line}\n`)
      const link = join(dir, "report.html")
      symlinkSync(audit, link)
      const other = join(dir, "other.jsonl")
      writeFileSync(other, `${line}\n`)
      const r = await runCli(["audit", other, audit, "--html", link])
      expect(r.code).toBe(64)
      expect(r.stderr).toContain(`--html ${link} is an audit file it reports on: the report would overwrite it`)
      expect(readFileSync(audit, "utf8")).toBe(`${line}\n`)
      const fine = await runCli(["audit", audit, "--html", join(dir, "out.html")])
      expect(fine.code).toBe(0)
    },
    Slow
  )
})

describe("abhed-ext test: a case whose field is given twice is malformed", () => {
  it("at the top, nested, or spelt with an escape; not a repeated value or a key inside a string", () => {
    const problem = (text: string) => {
      const decoded = decodeCase(text)
      return Result.isFailure(decoded) ? decoded.failure : undefined
    }
    const call = '"call":{"tool":"bash","args":{"command":"rm -rf /"}}'
    expect(problem(`{${call},"expect":"deny","by":"guard","expect":"allow"}`)).toBe(
      'field "expect" given twice: JSON would keep only the last; give each field once'
    )
    expect(problem('{"call":{"tool":"bash","args":{"command":"ls","command":"rm -rf /"}},"expect":"allow"}')).toContain(
      'field "command" given twice'
    )
    expect(problem(`{${call},"expect":"deny","\\u0065xpect":"allow"}`)).toContain('field "expect" given twice')
    expect(
      problem('{"call":{"tool":"bash","args":{"list":[{"a":1},{"a":1}],"s":"\\"a\\":1,\\"a\\":2"}},"expect":"allow"}')
    ).toBeUndefined()
  })
})

describe("a file name is shown escaped: a glob over a shared folder cannot drive the terminal", () => {
  const hostile = "x\u001b]0;pwned\u0007\u202e.jsonl"
  const shown = "x\\x1b]0;pwned\\x07\\u202e.jsonl"

  it(
    "audit, replay and test of a file that cannot be read; test of one without a case; a --junit that cannot be written",
    async () => {
      const dir = tempDir()
      const missing = join(dir, hostile)
      const config = configFile([guard])
      for (const args of [
        ["audit", missing],
        ["replay", "-c", config, missing],
        ["test", "-c", config, missing]
      ]) {
        const r = await runCli(args)
        expect(r.code).toBe(1)
        expect(r.stderr).toContain(`cannot read ${join(dir, shown)}: no such file`)
        expect(r.stderr).not.toMatch(/[\u001b\u0007\u202e]/u)
      }
      const empty = join(dir, `empty${hostile}`)
      writeFileSync(empty, "\n")
      const none = await runCli(["test", "-c", config, empty])
      expect(none.code).toBe(1)
      expect(none.stderr).toContain(`${join(dir, `empty${shown}`)} holds no case`)
      expect(none.stderr).not.toMatch(/[\u001b\u0007\u202e]/u)
      const cases = join(dir, "cases.jsonl")
      writeFileSync(cases, '{"call":{"tool":"bash","args":{"command":"ls"}},"expect":"allow"}\n')
      const unwritable = await runCli(["test", "-c", config, cases, "--junit", join(dir, hostile, "junit.xml")])
      expect(unwritable.code).toBe(1)
      expect(unwritable.stderr).toContain(`cannot write ${join(dir, shown, "junit.xml")}`)
      expect(unwritable.stderr).not.toMatch(/[\u001b\u0007\u202e]/u)
    },
    Slow
  )
})

describe("abhed-ext test: a case no extension saw says so", () => {
  it(
    "a guard subscribed to tool_result only: the call case passes on the policy alone, and reads as such",
    async () => {
      const cases = join(tempDir(), "cases.jsonl")
      writeFileSync(
        cases,
        [
          '{"name":"ls","call":{"tool":"bash","args":{"command":"ls"}},"expect":"allow"}',
          '{"tool_result":{"tool":"bash","args":{},"content":"FATAL"},"is_error":true}',
          ""
        ].join("\n")
      )
      const resultsOnly = { ...guard, events: ["tool_result"] }
      const r = await runCli(["test", "-c", configFile([resultsOnly]), cases])
      expect(r.stdout.split("\n").slice(0, 2)).toEqual([
        `PASS ${cases}:1 ls: allow (seen by no extension)`,
        `PASS ${cases}:2 tool_result of bash {}: content "FATAL", is_error true, by guard`
      ])
      expect(r.code).toBe(0)
    },
    Slow
  )
})

describe("abhed-ext test: failing names the extensions a case tests the on_failure of", () => {
  it(
    "a crashed guard named in failing: its on_failure's deny passes; an answering guard named in failing fails",
    async () => {
      const dir = tempDir()
      const cases = join(dir, "cases.jsonl")
      writeFileSync(
        cases,
        '{"name":"a dead guard denies","call":{"tool":"bash","args":{"command":"ls"}},"expect":"deny","by":"guard","failing":"guard"}\n'
      )
      const crash = {
        name: "guard",
        ...fixtureCommand("ext-crash.py"),
        args: [...fixtureCommand("ext-crash.py").args, fixture("ext-crash.py")],
        events: ["tool_call"],
        on_failure: "deny",
        ...Patient
      }
      const dead = await runCli(["test", "-c", configFile([crash]), cases])
      expect(dead.stdout).toContain(`PASS ${cases}:1 a dead guard denies: deny (guard: extension guard unavailable:`)
      expect(dead.code).toBe(0)
      const alive = await runCli(["test", "-c", configFile([guard]), cases])
      expect(alive.stdout.split("\n").slice(0, 5)).toEqual([
        `FAIL ${cases}:1 a dead guard denies`,
        "     expected: deny by guard, guard failing",
        "     came:     allow",
        "     - expected deny, got allow",
        "     - expected guard to fail; it did not"
      ])
      expect(alive.code).toBe(1)
    },
    Slow
  )
})

describe("replay: a record whose outcome cannot be read is malformed, not skipped", () => {
  it(
    "a tool_call record whose decision was edited: named with its file and line, exit 1 (--fail-on looser too)",
    async () => {
      const dir = tempDir()
      const events = join(dir, "events.jsonl")
      writeFileSync(events, '{"event":"tool_call","call_id":"c-1","tool":"bash","args":{"command":"rm -rf /"}}\n')
      const audit = join(dir, "audit.jsonl")
      const config = configFile([guard])
      expect((await runCli(["run", "-c", config, "--audit", audit, events])).code).toBe(0)
      const lines = readFileSync(audit, "utf8").trimEnd().split("\n")
      const at = lines.findIndex((l) => l.includes('"event":"tool_call"'))
      lines[at] = (lines[at] ?? "").replace('"decision":"deny"', '"decision":"dney"')
      writeFileSync(audit, `${lines.join("\n")}\n`)
      const r = await runCli(["replay", "-c", config, "--fail-on", "looser", audit])
      expect(r.stdout).toContain(
        `malformed:\n  ${audit}:${at + 1}: the recorded outcome is not a tool_call outcome (a decision allow, ask or deny, reasons, args)`
      )
      expect(r.stderr).toContain("1 audit line could not be read")
      expect(r.code).toBe(1)
    },
    Slow
  )
})
