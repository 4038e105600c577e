import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { fixture } from "../support/extension-helpers.ts"
import { configFile, guard, redactor, replayExtension, tempDir } from "../support/replay-extensions.ts"

/**
 * `abhed-ext replay`: a session recorded with `run --audit`, re-decided under another config with its real
 * extensions (node processes). Exactly the calls a new guard denies are reported, with exit 1; the same config
 * changes nothing (exit 0); `--fail-on looser` fails only when something became looser; what a digest audit does
 * not hold is listed as not replayable, never guessed.
 */

const session = fixture("replay/session.jsonl")

// One config file each, and one recording of each kind, shared by the tests: every CLI run starts node processes,
// which take seconds on a busy machine.
const once = <A>(make: () => A): (() => A) => {
  let made: { readonly value: A } | undefined
  return () => (made ??= { value: make() }).value
}
const withGuard = once(() => configFile([guard, redactor]))
const withoutGuard = once(() => configFile([redactor]))
const recordedWithout = once(() => record(withoutGuard(), "full"))
const recordedWith = once(() => record(withGuard(), "full"))
const recordedDigest = once(() => record(withoutGuard(), "digest"))

/** Several CLI runs in one test: a generous bound, never reached unless something hangs. */
const Slow = 240_000

/** Runs the recorded session under `config`, and returns the audit file. */
const record = async (config: string, content: "digest" | "full"): Promise<string> => {
  const audit = join(tempDir(), "audit.jsonl")
  const r = await runCli(["run", "-c", config, "--audit", audit, "--audit-content", content, session])
  expect(r.code).toBe(0)
  return audit
}

interface Report {
  readonly summary: {
    readonly replayed: number
    readonly stricter: number
    readonly looser: number
    readonly changed: number
    readonly unchanged: number
    readonly not_replayable: number
    readonly malformed: number
    readonly by: { readonly [name: string]: { stricter: number; looser: number; changed: number } }
  }
  readonly changes: ReadonlyArray<{
    readonly where: string
    readonly event: string
    readonly call_id?: string
    readonly change: string
    readonly by: ReadonlyArray<string>
    readonly before: { readonly [key: string]: unknown }
    readonly after: { readonly [key: string]: unknown }
  }>
  readonly not_replayable: ReadonlyArray<{
    readonly where: string
    readonly event: string
    readonly call_id?: string
    readonly reason: string
  }>
  readonly malformed: ReadonlyArray<{ readonly where: string; readonly problem: string }>
}

const replay = async (args: ReadonlyArray<string>) => {
  const r = await runCli(["replay", ...args, "--json"])
  const report: Report = JSON.parse(r.stdout)
  return { code: r.code, stderr: r.stderr, report }
}

const lineOf = (audit: string, event: string, callId?: string): string => {
  const lines = readFileSync(audit, "utf8").split("\n")
  const i = lines.findIndex((l) => {
    const r = JSON.parse(l || "{}")
    return r.event === event && (callId === undefined || r.call_id === callId)
  })
  return `${audit}:${i + 1}`
}

describe.concurrent("abhed-ext replay", () => {
  it(
    "a session recorded without the guard, replayed with it: exactly the calls it denies, by guard, exit 1",
    async () => {
      const audit = await recordedWithout()
      const { code, report, stderr } = await replay(["-c", withGuard(), audit])
      const calls = report.changes.filter((c) => c.event === "tool_call")
      expect(calls).toEqual([
        {
          where: lineOf(audit, "tool_call", "c-2"),
          session_id: "abhed-ext",
          seq: 4,
          event: "tool_call",
          call_id: "c-2",
          tool: "bash",
          change: "stricter",
          by: ["guard"],
          before: { decision: "allow", reasons: [], args: { command: "rm -rf /tmp/x" }, rewritten_by: [] },
          after: {
            decision: "deny",
            reasons: [{ extension: "guard", reason: "rm -rf is not permitted here" }],
            args: { command: "rm -rf /tmp/x" },
            rewritten_by: []
          }
        },
        expect.objectContaining({ call_id: "c-5", change: "stricter", by: ["guard"] })
      ])
      // The result whose content the audit holds whole gets the guard's is_error; the context loses its secret.
      expect(
        report.changes.filter((c) => c.event !== "tool_call").map((c) => [c.event, c.call_id, c.change, c.by, c.after])
      ).toEqual([
        ["tool_result", "c-4", "stricter", ["guard"], { content: "FATAL: no rule", is_error: true, by: ["guard"] }],
        ["context", undefined, "stricter", ["guard"], { keep: [0], withheld: [], by: ["guard"] }]
      ])
      // c-3's result, rewritten by the redactor before it was recorded, is replayed from what the tool returned (the
      // record's input): the redactor rewrites it again, unchanged.
      expect(report.not_replayable).toEqual([])
      expect(report.summary).toEqual({
        replayed: 8,
        stricter: 4,
        looser: 0,
        changed: 0,
        unchanged: 4,
        not_replayable: 0,
        malformed: 0,
        unanswered: 0,
        by: { guard: { stricter: 4, looser: 0, changed: 0 } }
      })
      expect(stderr).toContain("abhed-ext replay: 4 decisions changed")
      expect(code).toBe(1)
    },
    Slow
  )

  it(
    "replayed under the config it was recorded with: nothing changed, exit 0 (text report)",
    async () => {
      const config = withGuard()
      const r = await runCli(["replay", "-c", config, await recordedWith()])
      // c-3's result (rewritten), c-4's (is_error raised by the guard) and the context (the guard's keep) replay from
      // what came in, which their records hold.
      expect(r.stdout.trimEnd().split("\n").at(-1)).toBe(
        `replayed 8 events under ${config}: 0 stricter, 0 looser, 0 changed, 8 unchanged; 0 not replayable`
      )
      expect(r.code).toBe(0)
    },
    Slow
  )

  it(
    "--fail-on looser: removing the guard fails (the calls it denied are now allowed); adding it passes",
    async () => {
      const removed = await replay(["-c", withoutGuard(), "--fail-on", "looser", await recordedWith()])
      expect(
        removed.report.changes.filter((c) => c.change === "looser").map((c) => [c.event, c.call_id, c.by])
      ).toEqual([
        ["tool_call", "c-2", ["guard"]],
        ["tool_result", "c-4", ["guard"]],
        ["context", undefined, ["guard"]],
        ["tool_call", "c-5", ["guard"]]
      ])
      expect(removed.report.summary.looser).toBe(4)
      expect(removed.stderr).toContain("abhed-ext replay: 4 decisions became looser")
      expect(removed.code).toBe(1)
      // Tightening is what the gate allows: reported, exit 0.
      const added = await replay(["-c", withGuard(), "--fail-on", "looser", await recordedWithout()])
      expect([added.report.summary.stricter, added.report.summary.looser]).toEqual([4, 0])
      expect(added.code).toBe(0)
    },
    Slow
  )

  it(
    "a digest audit: its tool calls are replayed; its results and contexts are listed as not replayable",
    async () => {
      const audit = await recordedDigest()
      const { code, report } = await replay(["-c", withGuard(), audit])
      expect(report.changes.map((c) => [c.event, c.call_id, c.change])).toEqual([
        ["tool_call", "c-2", "stricter"],
        ["tool_call", "c-5", "stricter"]
      ])
      const digest = "the content is recorded as a digest (record with --audit-content full to replay it)"
      expect(report.not_replayable).toEqual([
        { where: lineOf(audit, "tool_result", "c-1"), event: "tool_result", call_id: "c-1", reason: digest },
        { where: lineOf(audit, "tool_result", "c-3"), event: "tool_result", call_id: "c-3", reason: digest },
        { where: lineOf(audit, "tool_result", "c-4"), event: "tool_result", call_id: "c-4", reason: digest },
        {
          where: lineOf(audit, "context"),
          event: "context",
          reason: "the messages are recorded as a digest (record with --audit-content full to replay them)"
        }
      ])
      expect(report.summary.replayed).toBe(4)
      expect(code).toBe(1)
    },
    Slow
  )

  it(
    "a withheld result replays from what the tool returned: without the extension that withheld it, looser",
    async () => {
      const withholder = { ...replayExtension("withholder", "withholder.mjs", ["tool_result"]), on_failure: "deny" }
      const events = join(tempDir(), "events.jsonl")
      writeFileSync(
        events,
        [
          `{"event":"tool_result","call_id":"c-1","tool":"bash","args":{"command":"cat key"},"content":"KEY=AKIAABCDEFGHIJKLMNOP","is_error":false}`,
          `{"event":"tool_result","call_id":"c-2","tool":"bash","args":{"command":"make"},"content":"CRASH","is_error":false}`
        ].join("\n") + "\n"
      )
      const audit = join(tempDir(), "audit.jsonl")
      const recorded = await runCli([
        "run",
        "-c",
        configFile([redactor, withholder]),
        "--audit",
        audit,
        "--audit-content",
        "full",
        events
      ])
      expect(recorded.code).toBe(0)
      const { code, report } = await replay(["-c", withoutGuard(), audit])
      // c-1 was rewritten by the redactor (which rewrites it again); c-2 was withheld, and now comes through.
      expect(report.not_replayable).toEqual([])
      expect(report.changes).toEqual([
        expect.objectContaining({
          where: lineOf(audit, "tool_result", "c-2"),
          call_id: "c-2",
          change: "looser",
          by: ["withholder"],
          before: {
            content: expect.stringMatching(/^\[withheld: extension withholder unavailable/),
            is_error: true,
            by: ["withholder"]
          },
          after: { content: "CRASH", is_error: false, by: [] }
        })
      ])
      expect([report.summary.replayed, report.summary.unchanged]).toEqual([2, 1])
      expect(code).toBe(1)
    },
    Slow
  )

  it(
    "two runs appended to one audit are two sessions; a line that is not a record is named and fails the replay",
    async () => {
      const config = withoutGuard()
      const audit = await record(config, "full")
      const second = await runCli(["run", "-c", config, "--audit", audit, "--audit-content", "full", session])
      expect(second.code).toBe(0)
      appendFileSync(audit, '{"seq":"x"}\n')
      const lines = readFileSync(audit, "utf8").trimEnd().split("\n").length
      const { code, report } = await replay(["-c", config, audit])
      expect([report.summary.replayed, report.summary.unchanged]).toEqual([16, 16])
      expect(report.malformed).toEqual([
        { where: `${audit}:${lines}`, problem: expect.stringMatching(/^not an audit record: /) }
      ])
      expect(code).toBe(1)
    },
    Slow
  )

  it(
    "exit 2 for an invalid config, 64 without an audit file",
    async () => {
      const invalid = await runCli(["replay", "-c", fixture("cli-invalid-config.json"), session])
      expect(invalid.code).toBe(2)
      const none = await runCli(["replay", "-c", withGuard()])
      expect(none.code).toBe(64)
    },
    Slow
  )
})
