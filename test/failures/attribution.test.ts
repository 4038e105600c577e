import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"

/**
 * Issue 8's repro through the real CLI: a guard against `rm -rf` that is out of step with its requests (a stray
 * line, a double reply, a banner, a stray reply in a later write). A reply is never matched to the wrong request
 * (docs/design.md#attribution, §2 ids): the guard is dead with `unsolicited_output`, so with `on_failure: "deny"`
 * both calls are denied as unavailable, and "no rm -rf" never lands on `ls`.
 */

const guard = `${repoRoot}test/fixtures/attr-guard.sh`
const input =
  [
    `{"event":"tool_call","tool":"bash","args":{"command":"rm -rf /"}}`,
    `{"event":"tool_call","tool":"bash","args":{"command":"ls"}}`
  ].join("\n") + "\n"

type Line = { readonly [key: string]: unknown }
interface Reason {
  readonly extension: string
  readonly reason: string
}
interface AuditExchange {
  readonly extension: string
  readonly status: string
  readonly error?: string
}
interface AuditRecord {
  readonly event: string
  readonly rounds: ReadonlyArray<{ readonly exchanges: ReadonlyArray<AuditExchange> }>
}

interface Options {
  readonly ids?: boolean
  readonly onFailure?: "deny"
  readonly replyIds?: "required"
}

const run = async (mode: string, options: Options = {}) => {
  const dir = mkdtempSync(join(tmpdir(), "abhed-attr-"))
  const config = join(dir, "abhed.json")
  const audit = join(dir, "audit.jsonl")
  writeFileSync(
    config,
    JSON.stringify({
      extensions: [
        {
          name: "guard",
          command: "bash",
          args: [guard],
          events: ["session_start", "tool_call"],
          env: { MODE: mode, IDS: options.ids === true ? "1" : "0" },
          ...(options.onFailure === undefined ? {} : { on_failure: options.onFailure }),
          ...(options.replyIds === undefined ? {} : { reply_ids: options.replyIds })
        }
      ]
    })
  )
  const r = await runCli(["run", "--config", config, "--audit", audit], { input })
  expect(r.code, r.stderr).toBe(0)
  const out = jsonLines(r.stdout) as Array<Line>
  expect(out.map((o) => o["event"])).toEqual(["tool_call", "tool_call"])
  const records = jsonLines(readFileSync(audit, "utf8")) as Array<AuditRecord>
  const guardErrors = records
    .flatMap((record) =>
      record.rounds.flatMap((round) => round.exchanges.filter((x) => x.extension === "guard" && x.error !== undefined))
    )
    .map((x) => x.error ?? "")
  return { rm: out[0], ls: out[1], guardErrors }
}

const reasons = (o: Line | undefined) => (o?.["reasons"] ?? []) as ReadonlyArray<Reason>

/** What every out-of-step guard must come to: dead for unsolicited output, its replies never applied. */
const expectDeadAndNeverApplied = async (mode: string, cause: RegExp, ids = false) => {
  const deny = await run(mode, { onFailure: "deny", ids })
  for (const o of [deny.rm, deny.ls]) {
    expect(o?.["decision"]).toBe("deny")
    expect(reasons(o)).toHaveLength(1)
    expect(reasons(o)[0]?.reason).toMatch(/^extension guard unavailable: unsolicited_output: /)
  }
  expect(deny.guardErrors[0]).toMatch(cause)

  // The issue's config as written (on_failure left at "ignore"): the guard is skipped, and its stray line is
  // never the verdict on `ls` nor the "allow" of `rm -rf /`.
  const ignore = await run(mode, { ids })
  expect(JSON.stringify(ignore.ls)).not.toContain("no rm -rf")
  expect(ignore.ls?.["decision"]).toBe("allow")
  expect(ignore.guardErrors.every((e) => e.startsWith("unsolicited_output: "))).toBe(true)
  expect(ignore.guardErrors.length).toBeGreaterThanOrEqual(1)
}

describe("a reply is never matched to the wrong request (issue 8, through abhed-ext run)", () => {
  it("the well-behaved guard denies rm -rf / and allows ls (the control)", async () => {
    const r = await run("ok", { onFailure: "deny" })
    expect(r.rm?.["decision"]).toBe("deny")
    expect(reasons(r.rm)).toEqual([{ extension: "guard", reason: "no rm -rf" }])
    expect(r.ls?.["decision"]).toBe("allow")
    expect(r.guardErrors).toEqual([])
  }, 30_000)

  it("a stray {} after session_start's reply: dead, never the reply to rm -rf /", async () => {
    await expectDeadAndNeverApplied("stray", /^unsolicited_output: \{\}$/)
  }, 30_000)

  it("two replies to each request in one write: dead at the first request", async () => {
    // Without ids nothing tells the reply from the stray line: the cause names the first line of the read (what
    // comes before a reply is a banner or a debug print more often than not).
    await expectDeadAndNeverApplied("double", /^unsolicited_output: \{\}$/)
  }, 30_000)

  it("the issue's own guard (printf: two lines in two writes) echoing ids: dead, never applied", async () => {
    // Usually both lines arrive in one read; on a loaded machine the second may arrive after rm -rf / was written,
    // where only its id gives it away. Either way it is never applied.
    await expectDeadAndNeverApplied(
      "printf",
      /^unsolicited_output: (\{"id":"\d+"\}|reply to id "\d+" while "\d+" was in flight)$/,
      true
    )
  }, 30_000)

  it("a readiness banner before any request, from a guard that echoes ids: dead", async () => {
    // The host writes session_start as soon as the process starts, so the banner may be read while session_start
    // is in flight: without ids it is then indistinguishable from the reply (docs/failures.md). With ids, the real
    // reply to session_start then carries an id that is no longer in flight.
    await expectDeadAndNeverApplied(
      "banner",
      /^unsolicited_output: (\{"<5 chars>":true\}|\{"id":"\d+"\}|reply to id "\d+" while "\d+" was in flight)$/,
      true
    )
  }, 30_000)

  it("a readiness banner with reply_ids required: malformed at once (a reply without id)", async () => {
    const r = await run("banner", { onFailure: "deny", ids: true, replyIds: "required" })
    for (const o of [r.rm, r.ls]) expect(o?.["decision"]).toBe("deny")
    expect(r.guardErrors[0]).toMatch(
      /^(malformed_reply: id: expected the request's id "\d+" \(reply_ids is "required"\), got nothing|unsolicited_output: \{"<5 chars>":true\})$/
    )
  }, 30_000)

  it("a stray reply in a second write after a pause (arriving while rm -rf / is in flight): caught by its id", async () => {
    // The stray line is read while the next request is in flight, or (if the host is slow) with nothing in
    // flight: either way it is never applied. Which one depends on the machine, so both causes are accepted.
    await expectDeadAndNeverApplied(
      "split",
      /^unsolicited_output: (reply to id "\d+" while "\d+" was in flight|\{"id":"\d+"\})$/,
      true
    )
  }, 30_000)
})
