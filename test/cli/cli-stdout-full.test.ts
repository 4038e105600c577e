import { spawn } from "node:child_process"
import { closeSync, openSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { bin, repoRoot } from "../support/cli-helpers.ts"

/**
 * Issue 24.1: stdout that cannot be written (a full disk: /dev/full gives ENOSPC) is exit 1 and one line on stderr,
 * for every command. `check` and `import-hooks` write their output last, after the work is done: the error arrived
 * after the CLI had decided to exit 0, and `import-hooks settings.json > abhed.json` left an empty config behind a
 * success.
 */

const toFull = (args: ReadonlyArray<string>, input: string) =>
  new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const full = openSync("/dev/full", "w")
    const child = spawn(process.execPath, [bin, ...args], { cwd: repoRoot, stdio: ["pipe", full, "pipe"] })
    let stderr = ""
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => {
      closeSync(full)
      resolve({ code, stderr })
    })
    child.stdin?.end(input)
  })

describe("stdout cannot be written (issue 24.1)", () => {
  it.each([
    // `cat` answers each request with itself, which passes every check: a report written last, as any extension's,
    // without the bash+jq example's jq start per request (seconds of CPU per check).
    ["check", ["check", "--", "cat"], ""],
    ["import-hooks", ["import-hooks", "test/fixtures/hooks/project/.claude/settings.json"], ""],
    ["run", ["run", "-c", "test/fixtures/cli-guard.json"], `{"event":"tool_call","tool":"read","args":{"path":"x"}}\n`],
    ["demo", ["demo"], ""]
  ] as const)(
    "%s: exit 1 and one line on stderr naming the failure",
    async (_name, args, input) => {
      const { code, stderr } = await toFull(args, input)
      expect(code, stderr).toBe(1)
      const failures = stderr.split("\n").filter((l) => l.includes("cannot write to stdout"))
      expect(failures, stderr).toHaveLength(1)
      expect(failures[0]).toMatch(/^abhed-ext: cannot write to stdout: ENOSPC/)
      expect(stderr).not.toContain("    at ") // no stack trace
    },
    120_000
  )
})
