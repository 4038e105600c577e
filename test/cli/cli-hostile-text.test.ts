import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { call, world } from "../support/config-world.ts"
import { fixture, Patient } from "../support/extension-helpers.ts"
import { configFile, tempDir } from "../support/replay-extensions.ts"

/**
 * Text the CLI prints for people that comes from an extension's reply or from an audit file (anyone's text) is
 * shown escaped: a reason, an extension name, a tool name or a call id cannot retitle the terminal, clear the lines
 * that matter away, move the cursor over them or write the clipboard (OSC 52). `replay`, `test` and
 * `run --summary` print such text; so do `trust` and `run` from a repository's own config, which the user judges on
 * sight before trusting it (an erased line, or a command shown reversed by a bidirectional override, hides what runs).
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

/** A repository whose `.abhed/abhed.json` runs `args`, in `cwd`, with an env key of its choosing. */
const hostileProject = (args: ReadonlyArray<string>, cwd: string, envKey: string) => {
  const w = world("abhed-hostile-trust-")
  mkdirSync(join(w.repo, ".abhed"), { recursive: true })
  writeFileSync(
    w.project,
    JSON.stringify({ extensions: [{ name: "guard", command: "bash", args, cwd, env: { [envKey]: "1" }, ...Patient }] })
  )
  return w
}

describe.concurrent("a repository's config is shown escaped where the user decides to trust it", () => {
  it("trust: a cwd that erases the line above, a bidi override in args, a title in an env key", async () => {
    const w = hostileProject(
      ["-c", "echo \u202e hs|lru\u202c", "x\u009b2K"],
      ".\u001b[1A\u001b[2K",
      "A\u001b]0;T\u0007"
    )
    const r = await runCli(["trust"], { cwd: w.repo, env: w.env })
    expect(r.code).toBe(1)
    expect(r.stdout).not.toMatch(controls)
    expect(r.stderr).not.toMatch(controls)
    expect(r.stdout).toContain('args     ["-c","echo \\u202e hs|lru\\u202c","x\\u009b2K"]')
    expect(r.stdout).toContain("cwd      ")
    expect(r.stdout).toContain(".\\x1b[1A\\x1b[2K")
    expect(r.stdout).toContain("env      A\\x1b]0;T\\x07")
  }, 120_000)

  it("run: what changed since the project was trusted (its cwd, its env keys) on stderr", async () => {
    const w = hostileProject(["-c", "cat"], ".", "A")
    expect((await runCli(["trust", "--yes"], { cwd: w.repo, env: w.env })).code).toBe(0)
    writeFileSync(
      w.project,
      JSON.stringify({
        extensions: [
          {
            name: "guard",
            command: "bash",
            args: ["-c", "cat"],
            cwd: ".\u001b[1A\u001b[2K",
            env: { "B\u001b]0;T\u0007": "1" },
            ...Patient
          }
        ]
      })
    )
    const r = await runCli(["run"], { cwd: w.repo, env: w.env, input: call })
    expect(r.stderr).toContain("is not trusted")
    expect(r.stderr).not.toMatch(controls)
    expect(r.stderr).toMatch(/cwd changed: \S+ -> \S+\/\.\\x1b\[1A\\x1b\[2K\n/)
    expect(r.stderr).toContain("env keys changed: +B\\x1b]0;T\\x07 -A")
  }, 120_000)

  it("run: a project config's problems quote its text escaped (JSON leaves C1 controls and bidi overrides)", async () => {
    const w = world("abhed-hostile-config-")
    mkdirSync(join(w.repo, ".abhed"), { recursive: true })
    writeFileSync(w.project, JSON.stringify({ extensions: [{ name: "x\u202e\u009b2J", command: "bash" }] }))
    const r = await runCli(["run"], { cwd: w.repo, env: w.env, input: call })
    expect(r.code).toBe(2)
    expect(r.stderr).not.toMatch(controls)
    expect(r.stderr).toContain('invalid name "x\\u202e\\u009b2J"')
    const direct = await runCli(["run", "-c", w.project], { input: call })
    expect(direct.code).toBe(2)
    expect(direct.stderr).not.toMatch(controls)
  }, 120_000)
})
