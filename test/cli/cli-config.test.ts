import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"

/**
 * `abhed.json` through the real CLI (issue 9.2): a key repeated lower in the file is a config error (exit 2)
 * naming both lines, never a silent replacement that lets `rm -rf /` through; comments are allowed; every
 * problem is printed as `file:line:column: path: message`.
 */

const guard = join(repoRoot, "docs", "examples", "block-secrets.sh")
const rmRoot = `{"event":"tool_call","tool":"bash","args":{"command":"rm -rf /"}}\n`

const writeConfig = (text: string): string => {
  const file = join(mkdtempSync(join(tmpdir(), "abhed-config-")), "abhed.json")
  writeFileSync(file, text)
  return file
}

const guarded = (tail: ReadonlyArray<string>) =>
  [
    "{",
    "  // the guards",
    `  "extensions": [{ "name": "guard", "command": "bash", "args": [${JSON.stringify(guard)}], "events": ["tool_call"] }],`,
    '  "policy": { "deny": [{ "tool": "bash", "args": { "command": "*rm -rf /*" }, "reason": "never delete from the root" }] }',
    ...tail,
    "}"
  ].join("\n")

describe.concurrent("abhed-ext run: a key repeated in abhed.json", () => {
  it("with the guards as written, rm -rf / is denied (the control)", async () => {
    const r = await runCli(["run", "--config", writeConfig(guarded([]))], { input: rmRoot })
    expect(r.code, r.stderr).toBe(0)
    expect(jsonLines(r.stdout)).toMatchObject([{ event: "tool_call", decision: "deny" }])
  })

  it('a second "extensions": [] and "policy" lower in the file exit 2 naming both lines; nothing is decided', async () => {
    const file = writeConfig(guarded([",", '  "max_rewrite_rounds": 4,', '  "extensions": [],', '  "policy": {}']))
    const r = await runCli(["run", "--config", file], { input: rmRoot })
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("") // no decision at all: rm -rf / is never allowed
    expect(r.stderr.trim().split("\n")).toEqual([
      `${file}:7:3: extensions: duplicate key "extensions" on lines 3 and 7: a repeated key would silently replace the first; keep one`,
      `${file}:8:3: policy: duplicate key "policy" on lines 4 and 8: a repeated key would silently replace the first; keep one`
    ])
  })

  it("a key repeated inside an extension exits 2 too", async () => {
    const file = writeConfig(
      '{"extensions": [{"name": "guard", "command": "bash",\n "events": ["tool_call"],\n "events": ["session_end"]}]}'
    )
    const r = await runCli(["run", "--config", file], { input: rmRoot })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`${file}:3:2: extensions[0].events: duplicate key "events" on lines 2 and 3`)
  })
})

describe.concurrent("abhed-ext run: abhed.json is JSON with comments", () => {
  it("comments are allowed", async () => {
    const r = await runCli(["run", "--config", writeConfig(`/* team guards */\n${guarded(["  // end"])}`)], {
      input: rmRoot
    })
    expect(r.code, r.stderr).toBe(0)
    expect(jsonLines(r.stdout)).toMatchObject([
      { decision: "deny", reasons: [{ extension: "policy", reason: "never delete from the root" }] }
    ])
  })

  it("a trailing comma exits 2 with its line and column", async () => {
    const file = writeConfig('{\n  "builtin_tools": ["bash",]\n}')
    const r = await runCli(["run", "--config", file], { input: rmRoot })
    expect(r.code).toBe(2)
    expect(r.stderr.trim()).toBe(
      `${file}:2:27: trailing comma (abhed.json allows comments, not trailing commas): remove it`
    )
  })
})

describe.concurrent("abhed-ext run --config - (docs/cli.md: `-` means stdin wherever a file is read)", () => {
  it("reads the config from stdin, its relative cwd from the current directory; the events from a file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-config-"))
    writeFileSync(
      join(dir, "guard.sh"),
      `while IFS= read -r line; do echo '{"block":true,"reason":"from stdin config"}'; done\n`
    )
    const events = join(dir, "events.jsonl")
    writeFileSync(events, rmRoot)
    const config = `{ // a comment, as in a file\n"extensions": [{"name": "g", "command": "bash", "args": ["guard.sh"], "events": ["tool_call"]}]}`
    const r = await runCli(["run", "-c", "-", events], { input: config, cwd: dir })
    expect(r.code, r.stderr).toBe(0)
    expect(jsonLines(r.stdout)).toMatchObject([
      { decision: "deny", reasons: [{ extension: "g", reason: "from stdin config" }] }
    ])
  })

  it("an invalid config from stdin exits 2, its problems named stdin:line:column", async () => {
    const r = await runCli(["run", "-c", "-", join(repoRoot, "docs", "examples", "session.jsonl")], {
      input: '{\n  "policy": {"deny": ["bash"]}\n}'
    })
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain("stdin:2:23: policy.deny[0]: must be a rule object")
  })

  it("with the events on stdin too, exit 64 before reading either: one stdin cannot carry both", async () => {
    for (const events of [[], ["-"]]) {
      const r = await runCli(["run", "-c", "-", ...events], { input: `{}\n${rmRoot}` })
      expect(r.code).toBe(64)
      expect(r.stdout).toBe("")
      expect(r.stderr).toContain("--config - reads the config from stdin, so the events must come from a file")
    }
  })
})
