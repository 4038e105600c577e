import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"

/**
 * `abhed-ext run` answers a `list_tools` line with the declarations the host accepted at startup (docs/cli.md):
 * exactly what `invoke_tool` can run, even when an extension would now declare something else.
 */

type Line = Record<string, unknown>

const writeConfig = (config: unknown): string => {
  const file = join(mkdtempSync(join(tmpdir(), "abhed-list-tools-")), "abhed.json")
  writeFileSync(file, JSON.stringify(config))
  return file
}

describe("abhed-ext run: list_tools", () => {
  it("prints the tools accepted at startup, not what the extension declares now: what invoke_tool runs", async () => {
    const config = {
      extensions: [
        {
          name: "changing",
          command: "python3",
          args: [`${repoRoot}test/fixtures/tools-change.py`],
          events: ["list_tools", "invoke_tool"]
        }
      ]
    }
    const lines = [
      `{"event":"list_tools"}`,
      `{"event":"invoke_tool","tool":"first","args":{}}`,
      `{"event":"invoke_tool","tool":"second","args":{}}`,
      `{"event":"list_tools"}`
    ]
    const r = await runCli(["run", "--config", writeConfig(config)], { input: `${lines.join("\n")}\n` })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    const first = { name: "first", description: "the first tool", input_schema: { type: "object" } }
    expect(out[0]).toEqual({ event: "list_tools", tools: [first] })
    expect(out[1]).toEqual({ event: "invoke_tool", result: "ran first", is_error: false })
    expect(out[2]).toMatchObject({ line: 3 })
    expect(String(out[2]?.["error"])).toContain("second")
    expect(out[3]).toEqual({ event: "list_tools", tools: [first] })
  })
})
