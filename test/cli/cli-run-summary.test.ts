import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bin, jsonLines, runCli } from "../support/cli-helpers.ts"
import { fixture, Patient } from "../support/extension-helpers.ts"

/**
 * `run`'s words where silence would mislead: `--summary` (calls by verdict, deaths with their cause, latency,
 * ignored allows), `--strict` (exit 1 when no extension is configured or one died), the warning for a config
 * without extensions, the note on a terminal that events are read from stdin.
 */

const bash = (name: string, file: string, events?: ReadonlyArray<string>) => ({
  name,
  command: "bash",
  args: [fixture(file)],
  ...Patient,
  grace_ms: 300,
  ...(events !== undefined ? { events } : {})
})

const configFile = (extensions: ReadonlyArray<object>): string => {
  const file = join(mkdtempSync(join(tmpdir(), "abhed-summary-")), "abhed.json")
  writeFileSync(file, JSON.stringify({ extensions }))
  return file
}

const calls =
  [
    `{"event":"tool_call","tool":"bash","args":{"command":"rm -rf /"}}`,
    `{"event":"tool_call","tool":"bash","args":{"command":"ls"}}`,
    `{"event":"tool_result","tool":"bash","args":{"command":"ls"},"content":"a","is_error":false}`,
    `not json`
  ].join("\n") + "\n"

const guard = bash("guard", "host-rm-guard.sh", ["tool_call"])
const crasher = bash("crasher", "ext-exit-at-start.sh")
const allower = bash("allower", "cli-allow.sh")

describe.concurrent("run --summary, run --strict", () => {
  it("calls by verdict, each extension live or dead with its cause, latency, ignored allows; then --strict exits 1", async () => {
    const r = await runCli(["run", "-c", configFile([guard, crasher, allower]), "--summary", "--strict"], {
      input: calls
    })
    // Every line decided first, on stdout alone.
    expect(jsonLines(r.stdout)).toEqual([
      expect.objectContaining({ event: "tool_call", decision: "deny" }),
      expect.objectContaining({ event: "tool_call", decision: "allow" }),
      expect.objectContaining({ event: "tool_result" }),
      expect.objectContaining({ line: 4 })
    ])
    const summary = r.stderr.slice(r.stderr.indexOf("abhed-ext run: 2 tool call(s)")).trimEnd().split("\n")
    expect(summary[0]).toBe(
      "abhed-ext run: 2 tool call(s): 1 denied, 0 asked, 1 allowed; 1 other event(s); 1 bad line(s)"
    )
    expect(summary[1]).toMatch(/^ {2}guard {4}live; 2 replies, p50 [\d.]+ ms, p99 [\d.]+ ms$/)
    expect(summary[2]).toBe("  crasher  DEAD: exited (code 3): ext-exit-at-start: bye; no replies")
    expect(summary[3]).toMatch(/^ {2}allower {2}live; 3 replies, p50 [\d.]+ ms, p99 [\d.]+ ms$/)
    expect(summary[4]).toBe('           2 allow(s) ignored (an extension may veto, never permit), e.g. "fine by me"')
    expect(summary[5]).toBe("abhed-ext run --strict: crasher died (exited (code 3): ext-exit-at-start: bye)")
    expect(summary).toHaveLength(6)
    expect(r.code).toBe(1)
  })

  it("no extension: the warning, the summary says so, --strict exits 1", async () => {
    const r = await runCli(["run", "-c", configFile([]), "--summary", "--strict"], { input: calls })
    expect(jsonLines(r.stdout)).toHaveLength(4)
    const lines = r.stderr.trimEnd().split("\n")
    expect(lines[0]).toContain("configures no extensions")
    expect(lines).toContain("  no extension configured: the policy alone decided")
    expect(lines.at(-1)).toBe("abhed-ext run --strict: no extension is configured")
    expect(r.code).toBe(1)
  })

  it("--strict exits 0 when every extension stayed alive, and says nothing", async () => {
    const r = await runCli(["run", "-c", configFile([guard, allower]), "--strict"], { input: calls })
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
  })

  it("without --strict, a death still exits 0", async () => {
    const r = await runCli(["run", "-c", configFile([guard, crasher])], { input: calls })
    expect(r.code).toBe(0)
  })
})

describe("run --summary and a hook adapter whose hook fails", () => {
  it("counts the failed runs as requests it could not answer, not as allows nor a death; --strict fails on them", async () => {
    // A hook that cannot run (exit 126: not executable, in the field) is answered failed: on_failure decides.
    const file = configFile([
      {
        name: "hooked",
        command: process.execPath,
        args: [bin, "hook", "--format=claude", "--", "bash", "-c", "exit 126"],
        events: ["tool_call"],
        ...Patient
      }
    ])
    const r = await runCli(["run", "-c", file, "--summary", "--strict"], { input: calls })
    const summary = r.stderr.trimEnd().split("\n")
    // Live, and the requests it could not answer counted beside its latency.
    expect(r.stderr).toMatch(/\n {2}hooked {2}live; .*; could not answer 2 request\(s\) \(its on_failure answered\)\n/)
    expect(r.stderr).toContain("extension hooked could not answer a tool_call request: hook failed: exit 126")
    expect(r.stderr).not.toContain("allow(s) ignored")
    expect(r.stderr).not.toContain("DEAD")
    // A guard that could not answer is no guard for those calls: --strict says so.
    expect(summary.at(-1)).toBe("abhed-ext run --strict: hooked could not answer 2 request(s)")
    expect(r.code, r.stderr).toBe(1)
  })
})

describe("run --summary and a hook whose answer fails in part", () => {
  it("counts the runs whose rewrite stood beside a value the peer does not know, with the note", async () => {
    // Claude knows no decision "deny": the run failed, but its updatedInput is a rewrite, which stands.
    const answer = JSON.stringify({
      decision: "deny",
      hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: { command: "ls" } }
    })
    const file = configFile([
      {
        name: "hooked",
        command: process.execPath,
        args: [bin, "hook", "--format=claude", "--", "bash", "-c", `cat >/dev/null; printf '%s' '${answer}'`],
        events: ["tool_call"],
        ...Patient
      }
    ])
    const r = await runCli(["run", "-c", file, "--summary"], { input: calls })
    // Three replies: both calls', and the rewritten call's second round (the hook's own rewrite, answered again).
    expect(r.stderr.trimEnd().split("\n").at(-1)).toMatch(
      /^ +3 hook run\(s\) failed in part, the rest of the answer standing \(--fail-closed blocks instead\), e\.g\. "hook failed: it answered decision \\"deny\\"/
    )
  })
})

describe.concurrent("run's warnings", () => {
  it("a config without extensions is a warning on stderr", async () => {
    const file = configFile([])
    const r = await runCli(["run", "-c", file], { input: calls })
    expect(r.code).toBe(0)
    expect(r.stderr).toBe(
      `abhed-ext run: warning: ${file} configures no extensions: nothing can veto a call, the policy alone decides ` +
        "(default: allow)\n"
    )
    expect(jsonLines(r.stdout)[0]).toMatchObject({ decision: "allow", args: { command: "rm -rf /" } })
  })

  it("on a terminal, says it reads events from stdin (and not when they are piped)", async () => {
    const file = configFile([guard])
    // python3's pty: the CLI's stdin (and stdout) a terminal; one request typed, then Ctrl-D.
    const script = [
      "import os, pty, subprocess, sys",
      "master, slave = pty.openpty()",
      "p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=subprocess.PIPE)",
      "os.close(slave)",
      'os.write(master, b\'{"event":"tool_call","tool":"bash","args":{"command":"ls"}}\\n\\x04\')',
      "err = p.stderr.read()",
      "p.wait()",
      "sys.stdout.write(err.decode())"
    ].join("\n")
    const stderr = await new Promise<string>((resolve, reject) => {
      const child = spawn("python3", ["-c", script, process.execPath, bin, "run", "-c", file], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      let out = ""
      child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d))
      child.on("error", reject)
      child.on("close", () => resolve(out))
    })
    expect(stderr).toBe("abhed-ext run: reading events from stdin, one JSON request per line (Ctrl-D to end)\n")
    const piped = await runCli(["run", "-c", file], { input: "" })
    expect(piped.stderr).toBe("")
  })
})
