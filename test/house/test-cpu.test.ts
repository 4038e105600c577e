import { describe, expect, it } from "@effect/vitest"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { parse, table } from "../support/cpu-report.ts"
import { commandKey, cpuTimes, parseStat } from "../support/cpu-usage.ts"

/**
 * `pnpm test:cpu`'s account of where the suite's CPU goes (test/support/cpu-usage.ts, cpu-report.ts): the children's
 * CPU read from `/proc/self/stat`, and the report's table.
 */
describe("the suite's CPU account", () => {
  it("reads a stat line whose command name holds spaces and parentheses", () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
    const line = "4242 (node (a) b) S 1 4242 4242 0 -1 4194560 100 200 0 0 250 50 1200 300 20 0 11 0"
    expect(parseStat(line)).toEqual({ self: 3, children: 15, childrenSystem: 3 })
    expect(parseStat("garbage")).toBeUndefined()
    expect(parseStat("1 (x) S 1 2 3")).toBeUndefined()
  })

  it.runIf(process.platform === "linux")("counts the CPU of a child process once it is reaped", () => {
    const before = cpuTimes()
    // About 0.3 s of CPU in a child, whatever the machine's load (CPU time, not wall time).
    const busy = "const end = process.cpuUsage().user + 300000; while (process.cpuUsage().user < end) {}"
    const r = NodeChildProcess.spawnSync(process.execPath, ["-e", busy])
    expect(r.status).toBe(0)
    const after = cpuTimes()
    expect(before).toBeDefined()
    expect(after).toBeDefined()
    if (before !== undefined && after !== undefined)
      expect(after.children - before.children).toBeGreaterThanOrEqual(0.25)
  })

  it("reports the file ABHED_TEST_CPU_OUT names, where vitest.cpu.config.ts wrote it", () => {
    const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "test-cpu-"))
    const out = NodePath.join(dir, "test-cpu.jsonl")
    NodeFs.writeFileSync(
      out,
      `${JSON.stringify({ file: "named.test.ts", self: 1, children: 1, childrenSystem: 0, wall: 1, spawns: {} })}\n`
    )
    const r = NodeChildProcess.spawnSync(
      process.execPath,
      [NodePath.join(import.meta.dirname, "..", "support", "cpu-report.ts")],
      { encoding: "utf8", env: { ...process.env, ABHED_TEST_CPU_OUT: out } }
    )
    NodeFs.rmSync(dir, { recursive: true, force: true })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("named.test.ts")
  })

  it("fails, with no table, when vitest cannot be started (an older run's table read as this one's passed)", () => {
    const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "test-cpu-"))
    const out = NodePath.join(dir, "test-cpu.jsonl")
    NodeFs.writeFileSync(
      out,
      `${JSON.stringify({ file: "older.test.ts", self: 1, children: 1, childrenSystem: 0, wall: 1, spawns: {} })}\n`
    )
    // A PATH of one empty folder: no vitest on it (node is started by its path).
    const r = NodeChildProcess.spawnSync(
      process.execPath,
      [NodePath.join(import.meta.dirname, "..", "support", "cpu-run.ts"), "no-such.test.ts"],
      { encoding: "utf8", env: { PATH: dir, ABHED_TEST_CPU_OUT: out } }
    )
    NodeFs.rmSync(dir, { recursive: true, force: true })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("test:cpu: vitest not started")
    expect(r.stdout).not.toContain("older.test.ts")
  })

  it("names a started process by its script, or by the flag of the code it was given inline", () => {
    expect(commandKey("/usr/bin/node", ["--enable-source-maps", "/tmp/x/bin.mjs", "list"])).toBe("node bin.mjs")
    expect(commandKey("bash", ["ext-fault.sh"])).toBe("bash ext-fault.sh")
    expect(commandKey(process.execPath, ["-e", "require('fs').readFileSync('/proc/self/status')"])).toBe("node -e")
    expect(commandKey("bash", ["-c", "echo a/b"])).toBe("bash -c")
    expect(commandKey("/usr/bin/python3", ["-c", "pass"])).toBe("python3")
    expect(commandKey("node", { stdio: "ignore" })).toBe("node")
  })

  it("tabulates the files dearest first, with totals, and names the lines it cannot read", () => {
    const text = [
      JSON.stringify({ file: "a.test.ts", self: 1, children: 0.5, childrenSystem: 0.1, wall: 2, spawns: {} }),
      "{not json",
      JSON.stringify({
        file: "b.test.ts",
        self: 0.5,
        children: 4,
        childrenSystem: 1,
        wall: 3,
        spawns: { "node bin.mjs": 7, jq: 2 }
      }),
      JSON.stringify({ nothing: true }),
      ""
    ].join("\n")
    const { bad, rows } = parse(text)
    expect(bad).toEqual([2, 4])
    const lines = table(rows).split("\n")
    expect(lines[1]).toContain("b.test.ts  (node bin.mjs ×7, jq ×2)")
    expect(lines[2]).toContain("a.test.ts")
    expect(lines[3]).toBe("total: 6.0 s of CPU (workers 1.5, started processes 4.5), 2 files")
  })
})
