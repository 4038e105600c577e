import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { fixture, Patient } from "../support/extension-helpers.ts"
import { configFile, tempDir } from "../support/replay-extensions.ts"

/**
 * Text the CLI prints for people that comes from an extension's reply or from an audit file (anyone's text) is
 * shown escaped: a reason, an extension name, a tool name or a call id cannot retitle the terminal, clear the lines
 * that matter away, move the cursor over them or write the clipboard (OSC 52). `replay`, `test` and
 * `run --summary` print such text.
 */

/** Every character a terminal acts on, but tab and the line breaks between lines. */
const controls = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/

const hostileReason = {
  name: "hostile",
  command: process.execPath,
  args: [fixture("ext-hostile-reason.mjs")],
  events: ["tool_call"],
  ...Patient,
  grace_ms: 300
}

/** The reason ext-hostile-reason.mjs gives, as `printable` shows it. */
const shown =
  "\\x1b]0;PWNED\\x07title \\x1b[2J\\x1b[Hclear \\x1b]52;c;cm0gLXJmIC8=\\x07clip \\u009b31m bidi \\u202e cr\\x0doverwritten"

/** An audit written by an attacker: a deny by a hostile name, for a hostile tool and call id, in a hostile session. */
const hostileAudit = (): string => {
  const session = "s\u001b]0;PWNED\u0007"
  const records = [
    { seq: 0, session_id: session, time: "2026-12-01T19:34:26.250Z", event: "session_start", rounds: [] },
    {
      seq: 1,
      session_id: session,
      time: "2026-12-01T19:34:26.306Z",
      event: "tool_call",
      call_id: "c\u001b[2J",
      tool: "bash\u009b31m",
      args: { command: "ls" },
      rounds: [],
      outcome: {
        decision: "deny",
        reasons: [{ extension: "evil\u001b]52;c;cm0gLXJmIC8=\u0007", reason: "no\u001b[2J\u001b[Hclear\r\u202eover" }],
        args: { command: "ls" }
      }
    },
    {
      seq: 2,
      session_id: session,
      time: "2026-12-01T19:34:26.306Z",
      event: "before_agent_start",
      call_id: "x\u001b]0;PWNED\u0007",
      rounds: []
    },
    { seq: 3, event: "tool_call\u001b]0;PWNED\u0007" }
  ].map((r) => JSON.stringify({ outcome: {}, notes: [], duration_ms: 1, ...r }))
  const file = join(tempDir(), "audit\u001b[2J.jsonl")
  writeFileSync(file, `${records.join("\n")}\n`)
  return file
}

describe.concurrent("text from extensions and audit files is shown escaped", () => {
  it("replay: an attacker's audit (names, reasons, tool, call id, session, file name) cannot drive the terminal", async () => {
    const audit = hostileAudit()
    const r = await runCli(["replay", "-c", configFile([]), audit])
    expect(r.code).toBe(1)
    expect(r.stdout).not.toMatch(controls)
    expect(r.stderr).not.toMatch(controls)
    const lines = r.stdout.split("\n")
    expect(lines[0]).toContain(
      "tool_call c\\x1b[2J bash\\u009b31m (session s\\x1b]0;PWNED\\x07) by evil\\x1b]52;c;cm0gLXJmIC8=\\x07"
    )
    expect(lines[1]).toBe(
      '  before: deny (evil\\x1b]52;c;cm0gLXJmIC8=\\x07: no\\x1b[2J\\x1b[Hclear\\x0d\\u202eover), args {"command":"ls"}'
    )
    expect(r.stdout).toContain("before_agent_start x\\x1b]0;PWNED\\x07: replay re-decides")
    expect(r.stdout).toContain("audit\\x1b[2J.jsonl:4")
  }, 120_000)

  it("test: an extension's reason in what came, for a case that passes and one that fails", async () => {
    const cases = join(tempDir(), "cases.jsonl")
    writeFileSync(
      cases,
      [
        { name: "blocked", call: { tool: "bash", args: {} }, expect: "deny" },
        { name: "expected to pass", call: { tool: "bash", args: {} }, expect: "allow" }
      ]
        .map((c) => JSON.stringify(c))
        .join("\n")
    )
    const r = await runCli(["test", "-c", configFile([hostileReason]), cases])
    expect(r.code).toBe(1)
    expect(r.stdout).not.toMatch(controls)
    expect(r.stdout).toContain(`blocked: deny (hostile: ${shown})`)
    expect(r.stdout).toContain(`     came:     deny (hostile: ${shown})`)
  }, 120_000)

  it("run --summary: an ignored allow's reason", async () => {
    const events = join(tempDir(), "events.jsonl")
    writeFileSync(events, `${JSON.stringify({ event: "tool_call", tool: "bash", args: { allow: true } })}\n`)
    const r = await runCli(["run", "--summary", "-c", configFile([hostileReason]), events])
    expect(r.code).toBe(0)
    expect(r.stderr).not.toMatch(controls)
    expect(r.stderr).toContain("1 allow(s) ignored")
  }, 120_000)
})
