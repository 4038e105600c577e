import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, runCli } from "../support/cli-helpers.ts"

/** What a user sees when the CLI cannot do its job: one line naming the problem, the documented exit code. */

const config = "docs/examples/abhed.json"
const call = `{"event":"tool_call","tool":"read","args":{"path":".env"}}\n`

describe.concurrent("abhed-ext run: files it cannot use", () => {
  it("an events file that cannot be read exits 1 with one line naming it, no stack trace", async () => {
    const r = await runCli(["run", "--config", config, "test/fixtures/cli-no-such-events.jsonl"])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toContain("cannot read test/fixtures/cli-no-such-events.jsonl")
    expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/)
  })

  it("an audit file that cannot be written exits 1 with one line naming it, no stack trace", async () => {
    const r = await runCli(["run", "--config", config, "--audit", "/no/such/dir/audit.jsonl"], { input: call })
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toContain("cannot write /no/such/dir/audit.jsonl")
    expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/)
  })
})

describe.concurrent("abhed-ext run: a config given as the events file (--config forgotten)", () => {
  // Read as requests, a config is an error line per line of it and exit 0, with no extension started: say what
  // was meant instead, and run nothing.
  it("is bad usage naming the file and the command line that runs it", async () => {
    const r = await runCli(["run", config])
    expect(r.code).toBe(64)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain(
      `abhed-ext run: ${config} is a config (it has "extensions"), not events (one JSON request per line): ` +
        `to run its extensions, name it with --config: abhed-ext run --config ${config} [EVENTS.jsonl]`
    )
  })

  it("with --config too, it says the events are missing", async () => {
    const r = await runCli(["run", "--config", config, config])
    expect(r.code).toBe(64)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain("give the requests as EVENTS.jsonl, or on stdin")
  })

  it("a one-line events file is still events", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-events-"))
    try {
      const events = join(dir, "call.json")
      writeFileSync(events, call)
      const r = await runCli(["run", "--config", config, events])
      expect(r.code).toBe(0)
      expect(jsonLines(r.stdout)).toMatchObject([{ event: "tool_call", decision: "deny" }])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe.concurrent("abhed-ext check: durations must make sense", () => {
  // A zero or negative reply timeout cannot be met: reject it as bad usage instead of reporting the extension.
  for (const [flag, value] of [
    ["--timeout-ms", "0"],
    ["--timeout-ms", "-5"],
    ["--startup-timeout-ms", "0"],
    ["--grace-ms", "-1"],
    ["--quiet-ms", "-1"]
  ] as const) {
    it(`${flag} ${value} is bad usage (exit 64, names the flag), nothing is checked`, async () => {
      const r = await runCli(["check", `${flag}=${value}`, "--", "cat"])
      expect(r.code).toBe(64)
      expect(r.stderr).toContain(flag)
      expect(r.stdout).not.toContain("abhed-ext check: cat")
    })
  }
})

describe.concurrent("abhed-ext check: a command that names no program", () => {
  // Nothing can be started: bad usage (exit 64, one line and the hint), not a crash nor a report of a failed start.
  for (const [command, problem] of [
    ["", "the command after -- is empty; give the program to run, e.g. abhed-ext check -- bash guard.sh"],
    [
      "  ",
      "the command after -- is blank (only whitespace); give the program to run, e.g. abhed-ext check -- bash guard.sh"
    ]
  ] as const) {
    it(`${JSON.stringify(command)} is bad usage (exit 64), nothing on stdout, no stack trace`, async () => {
      const r = await runCli(["check", "--", command, "x"])
      expect(r.code).toBe(64)
      expect(r.stdout).toBe("")
      expect(r.stderr.trim().split("\n")).toEqual([
        `abhed-ext check: ${problem}`,
        "(`abhed-ext check --help` for more)"
      ])
    })
  }
})

describe.concurrent("abhed-ext check: a command that cannot start says what to do", () => {
  it("a program not installed: is it on PATH?", async () => {
    const r = await runCli(["check", "--", "abhed-no-such-program", "guard.py"])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain("no such program on PATH: is it installed?")
  })

  it("a script without its executable bit: chmod +x, or its interpreter", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-noexec-"))
    try {
      writeFileSync(join(dir, "guard.sh"), "#!/bin/bash\ncat\n", { mode: 0o644 })
      const r = await runCli(["check", "--", "./guard.sh"], { cwd: dir })
      expect(r.code).toBe(1)
      expect(r.stdout).toContain("or start it through its interpreter: bash ./guard.sh")
      // Named without ./, it is looked up on PATH: say that it is here.
      const bare = await runCli(["check", "--", "guard.sh"], { cwd: dir })
      expect(bare.code).toBe(1)
      expect(bare.stdout).toContain("guard.sh is a file in the working directory: name it ./guard.sh")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("abhed-ext check: the command line it prints", () => {
  it("quotes arguments so the shown command can be pasted back into a shell", async () => {
    // Patient: the second check must pass (exit 0) on a loaded machine too.
    const r = await runCli(["check", "--timeout-ms", "15000", "--", "bash", "-c", "cat"])
    expect(r.stdout.split("\n")[0]).toBe("abhed-ext check: bash -c cat")
    const q = await runCli(["check", "--timeout-ms", "15000", "--", "bash", "-c", "echo '{}' >/dev/null; cat"])
    expect(q.stdout.split("\n")[0]).toBe(`abhed-ext check: bash -c 'echo '\\''{}'\\'' >/dev/null; cat'`)
    expect(q.code).toBe(0)
  })
})

describe("abhed-ext run: stdout carries the output lines only", () => {
  it("a dead extension's warning and --log-level debug logs go to stderr; every stdout line is JSON", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-cli-"))
    try {
      const config = join(dir, "abhed.json")
      writeFileSync(
        config,
        JSON.stringify({
          extensions: [
            { name: "dead", command: "abhed-no-such-command-xyz" },
            {
              name: "chatty",
              command: "bash",
              args: ["-c", "while read -r l; do echo \"chatty: $l\" >&2; echo '{}'; done"]
            }
          ]
        })
      )
      const r = await runCli(["run", "--log-level", "debug", "--config", config], { input: call })
      expect(r.code).toBe(0)
      expect(r.stdout.trim().split("\n")).toHaveLength(1)
      expect(jsonLines(r.stdout)).toEqual([
        { event: "tool_call", decision: "allow", reasons: [], args: { path: ".env" }, rounds: 1 }
      ])
      expect(r.stderr).toContain("extension dead is dead")
      expect(r.stderr).toContain("chatty: ")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
