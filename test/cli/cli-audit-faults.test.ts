import { execFileSync } from "node:child_process"
import { chmodSync, chownSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bin, jsonLines, runCli, runProcess } from "../support/cli-helpers.ts"
import { fixture, Patient } from "../support/extension-helpers.ts"

/**
 * `run --audit` when the trail's file fails under it, and what the trail looks like to `audit` after: the session
 * goes on and every decision is still made, the operator is told once, the exit code says records were lost, and a
 * line torn by a failed write (or a run killed mid-write) costs that line alone, never the next record.
 */

const temp = () => mkdtempSync(join(tmpdir(), "abhed-audit-faults-"))

/** A guard that denies reads of a path with "secret" in it, and allows the rest. */
const guardConfig = (dir: string) => {
  const file = join(dir, "abhed.json")
  writeFileSync(
    file,
    JSON.stringify({
      extensions: [
        { name: "guard", command: "bash", args: [fixture("cli-block-reads.sh")], events: ["tool_call"], ...Patient }
      ]
    })
  )
  return file
}

const fifo = (dir: string) => {
  const path = join(dir, "fifo")
  execFileSync("mkfifo", [path])
  return path
}

/** A file of uid 65534's (the tests run as root, as cli-files.test.ts's do), readable and writable by all. */
const othersFile = (dir: string) => {
  const path = join(dir, "theirs.jsonl")
  writeFileSync(path, "")
  chmodSync(path, 0o666)
  chownSync(path, 65534, 65534)
  return path
}

const link = (target: string) => {
  const path = join(temp(), "audit.jsonl")
  symlinkSync(target, path)
  return path
}

const calls = (n: number, path: (i: number) => string) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({ event: "tool_call", call_id: `c-${i}`, tool: "read", args: { path: path(i) } })
  )
    .map((l) => `${l}\n`)
    .join("")

const secretEveryOther = (i: number) => (i % 2 === 0 ? `secret-${i}.txt` : `README-${i}.md`)

/** What the CLI said on stderr, less the structured log's own prefix. */
const stderrLines = (stderr: string) => stderr.split("\n").filter((l) => l.trim() !== "")

describe.concurrent("run --audit: the trail's file fails mid-session", () => {
  it("EFBIG (ulimit -f) after a few records: every call still decided, one warning, exit 1 naming the records lost", async () => {
    const dir = temp()
    const audit = join(dir, "audit.jsonl")
    const events = join(dir, "events.jsonl")
    writeFileSync(events, calls(8, secretEveryOther))
    // 2 KiB: the session's first records fit, the rest do not (Node ignores SIGXFSZ: the write fails with EFBIG).
    const r = await runProcess("sh", [
      "-c",
      'ulimit -f 2; exec "$0" "$1" run -c "$2" --audit "$3" "$4"',
      process.execPath,
      bin,
      guardConfig(dir),
      audit,
      events
    ])
    expect(jsonLines(r.stdout).map((o) => (o as { decision: string }).decision)).toEqual(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? "deny" : "allow"))
    )
    const said = stderrLines(r.stderr)
    expect(said.filter((l) => l.includes("EFBIG"))).toHaveLength(2)
    expect(said.filter((l) => l.includes("records are not being written"))).toHaveLength(1)
    expect(said.at(-1)).toMatch(new RegExp(`^cannot write ${audit}: \\d+ audit records were not written \\(EFBIG`))
    expect(r.code).toBe(1)
  })

  it("a trail that ends inside a line (a torn write, a run killed mid-write): the next run's records start a line of their own", async () => {
    const dir = temp()
    const audit = join(dir, "audit.jsonl")
    writeFileSync(audit, '{"seq":7,"session_id":"earlier","time":"2026-12-01T00:00:00.000Z","event":"tool_ca', {
      mode: 0o600
    })
    const r = await runCli(["run", "-c", guardConfig(dir), "--audit", audit], { input: calls(2, secretEveryOther) })
    expect(r.code).toBe(0)
    const lines = readFileSync(audit, "utf8").split("\n")
    expect(lines[0]).toBe('{"seq":7,"session_id":"earlier","time":"2026-12-01T00:00:00.000Z","event":"tool_ca')
    const records = lines.slice(1).filter((l) => l !== "")
    expect(records.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual([
      "session_start",
      "list_tools",
      "tool_call",
      "tool_call",
      "session_end"
    ])
    // `audit` loses the torn line alone, and says so.
    const read = await runCli(["audit", audit, "--decision", "deny", "--json"])
    expect(stderrLines(read.stderr)[0]).toMatch(new RegExp(`${audit}:1: not JSON`))
    expect(jsonLines(read.stdout).map((o) => (o as { call_id: string }).call_id)).toEqual(["c-0"])
    expect(read.code).toBe(1)
  })
})

describe.concurrent("run --audit: paths that are not the operator's own regular file, refused before anything runs", () => {
  const targets: ReadonlyArray<readonly [string, () => string]> = [
    ["/dev/full", () => "/dev/full"],
    ["a FIFO nobody reads", () => fifo(temp())],
    ["a folder", () => temp()],
    ["another user's file", () => othersFile(temp())]
  ]
  const symlinked = "is a symbolic link: it is opened without following links; give the real file"
  it.each<readonly [string, () => string, string]>([
    ["/dev/full (a full disk on every write)", () => "/dev/full", "is a character device, not a regular file"],
    ["a folder", () => temp(), "is a folder, not a regular file"],
    ...targets.map(([what, target]) => [`a symbolic link to ${what}`, () => link(target()), symlinked] as const)
  ])("%s: exit 1, one line, no call decided", async (_, path, why) => {
    const dir = temp()
    const audit = path()
    const r = await runCli(["run", "-c", guardConfig(dir), "--audit", audit], { input: calls(1, secretEveryOther) })
    expect(r.stdout).toBe("")
    expect(stderrLines(r.stderr)).toEqual([`cannot write ${audit}: ${why}`])
    expect(r.code).toBe(1)
  })
})

describe.concurrent("run --audit: the trail's lines", () => {
  it("two runs appending to one file at once, with args of 16 KiB holding newlines, CR and U+2028: every record one whole line", async () => {
    const dir = temp()
    const audit = join(dir, "audit.jsonl")
    const config = guardConfig(dir)
    const big = `${"x".repeat(16 * 1024)}\n\r\u2028\u2029end`
    const input = calls(40, (i) => `${secretEveryOther(i)}${big}`)
    const [a, b] = await Promise.all(
      ["A", "B"].map((id) => runCli(["run", "-c", config, "--audit", audit, "--session-id", id], { input }))
    )
    expect([a?.code, b?.code]).toEqual([0, 0])
    const lines = readFileSync(audit, "utf8").split("\n")
    expect(lines.at(-1)).toBe("")
    const records = lines.slice(0, -1).map((l) => JSON.parse(l) as { session_id: string; args?: { path: string } })
    for (const id of ["A", "B"]) {
      const own = records.filter((r) => r.session_id === id && r.args !== undefined)
      expect(own.map((r) => r.args?.path)).toEqual(Array.from({ length: 40 }, (_, i) => `${secretEveryOther(i)}${big}`))
    }
    const read = await runCli(["audit", audit, "--decision", "deny", "--json"])
    expect(read.stderr).toBe("")
    expect(jsonLines(read.stdout)).toHaveLength(40)
    expect(read.code).toBe(0)
  })

  it("audit on a trail still being written (its last line partial): every whole record shown, the partial line named, exit 1", async () => {
    const dir = temp()
    const audit = join(dir, "audit.jsonl")
    await runCli(["run", "-c", guardConfig(dir), "--audit", audit], { input: calls(2, secretEveryOther) })
    const whole = readFileSync(audit, "utf8")
    const lines = whole.split("\n").length - 1
    writeFileSync(audit, `${whole}{"seq":99,"session_id":"abhed-ext","ti`)
    const read = await runCli(["audit", audit, "--json"])
    expect(jsonLines(read.stdout)).toHaveLength(lines)
    expect(stderrLines(read.stderr)[0]).toMatch(new RegExp(`${audit}:${lines + 1}: not JSON`))
    expect(read.code).toBe(1)
  })
})

describe.concurrent("run --audit FILE where FILE is also what the run reads: refused, exit 64, nothing written", () => {
  // More than one read's worth (64 KiB): before, the run read its own records back as events, without end.
  const events = calls(1200, (i) => `README-${i}.md`)
  it.each([
    ["the events file", 'exec "$0" "$1" run -c "$2" --audit "$3" "$3"', "is the file the events are read from:"],
    [
      "stdin, redirected from it",
      'exec "$0" "$1" run -c "$2" --audit "$3" < "$3"',
      "is the file the events are read from (stdin):"
    ],
    ["the config file", 'exec "$0" "$1" run -c "$2" --audit "$2" < "$3"', "is the config file:"]
  ])("%s", async (_, script, said) => {
    const dir = temp()
    const config = guardConfig(dir)
    const file = join(dir, "session.jsonl")
    writeFileSync(file, events, { mode: 0o600 })
    const before = { config: readFileSync(config, "utf8"), events: readFileSync(file, "utf8") }
    // A bound on the run that loops (the bug), so that it fails rather than hangs: far beyond a refusal's time.
    const r = await runProcess("timeout", ["120", "sh", "-c", script, process.execPath, bin, config, file])
    expect(r.stderr).toContain(said)
    expect(r.stdout).toBe("")
    expect(r.code).toBe(64)
    expect({ config: readFileSync(config, "utf8"), events: readFileSync(file, "utf8") }).toEqual(before)
  })
})
