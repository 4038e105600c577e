import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"

/**
 * Values in `abhed.json` no process can use (docs/design.md#configuration: empty commands are config errors): a blank command, a NUL
 * character in an argument or environment value, a duration longer than a timer can wait. Each exits 2 before
 * anything starts, with one line naming the file, the line and column, the path and the fix; never a spawn
 * failure at run time nor a timer that fires at once.
 */

const call = `{"event":"tool_call","tool":"bash","args":{"command":"ls"}}\n`

const writeConfig = (text: string): string => {
  const file = join(mkdtempSync(join(tmpdir(), "abhed-config-")), "abhed.json")
  writeFileSync(file, text)
  return file
}

/** One extension, `fields` (JSON text) added after its name and command, on line 2 of the file. */
const withExtension = (fields: string) => `{"extensions": [\n  {"name": "guard", "command": "cat"${fields}}\n]}\n`

describe.concurrent("abhed-ext run: config values no process can use exit 2 before anything starts", () => {
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    [
      "a whitespace-only command",
      `{"extensions": [\n  {"name": "guard", "command": " "}\n]}\n`,
      '2:21: extensions[0].command: blank (only whitespace); the program to run, e.g. "bash"'
    ],
    [
      "a NUL in an argument",
      withExtension(`, "args": ["-", "a\\u0000"]`),
      "2:53: extensions[0].args[1]: contains a NUL character, which no program argument can carry"
    ],
    [
      "a NUL in an environment value",
      withExtension(`, "env": {"X": "\\u0000"}`),
      "2:47: extensions[0].env.X: contains a NUL character, which no environment value can carry"
    ],
    [
      "a grace_ms past the longest timer",
      withExtension(`, "grace_ms": 3000000000`),
      "2:39: extensions[0].grace_ms: must be at most 2147483647 (about 24.8 days, the longest a timer can wait), got 3000000000"
    ],
    [
      "a timeout too large for a double",
      withExtension(`, "startup_timeout_ms": 1e400`),
      "2:39: extensions[0].startup_timeout_ms: must be a positive integer (milliseconds), got Infinity"
    ],
    [
      "a file of comments only",
      "// extensions to come\n",
      "2:1: invalid JSON: the file is empty (only comments; a config with nothing in it is {})"
    ]
  ]
  for (const [what, text, line] of cases) {
    it(what, async () => {
      const file = writeConfig(text)
      const r = await runCli(["run", "--config", file], { input: call })
      expect(r.code, r.stderr).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr.trim().split("\n")).toEqual([`${file}:${line}`])
    })
  }
})
