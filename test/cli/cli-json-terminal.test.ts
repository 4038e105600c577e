import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { Patient } from "../support/extension-helpers.ts"

/**
 * The JSON the CLI prints holds what others wrote (an extension's reason, an audit a teammate sent): a C1 control
 * (U+009B, a CSI some terminals obey), a bidirectional override (U+202E) or a line separator reaches stdout as its
 * escape, the same JSON value, never raw (packages/cli/src/JsonText.ts).
 */

const Deceiving = /[\u0080-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/
const hostile = "no\u009b2J\u202eevil\u2028line\u200b"
const Slow = 60_000

describe("JSON on stdout, with what others wrote in it", () => {
  it(
    "run: an extension's reason with a CSI, a bidi override and a line separator is printed escaped, the same value",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "abhed-json-term-"))
      const config = join(dir, "abhed.json")
      const reply = JSON.stringify({ block: true, reason: hostile })
      writeFileSync(
        config,
        JSON.stringify({
          extensions: [
            {
              name: "g",
              command: process.execPath,
              args: [
                "-e",
                `require("readline").createInterface({input:process.stdin}).on("line",()=>console.log(${JSON.stringify(reply)}))`
              ],
              events: ["tool_call"],
              ...Patient
            }
          ]
        })
      )
      const r = await runCli(["run", "--config", config], {
        input: `${JSON.stringify({ event: "tool_call", tool: "bash", args: { command: "ls" } })}\n`
      })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).not.toMatch(Deceiving)
      expect(JSON.parse(r.stdout)).toMatchObject({ decision: "deny", reasons: [{ extension: "g", reason: hostile }] })
    },
    Slow
  )

  it(
    "audit --json: a record's raw bidi override and C1 control are printed escaped, the same value",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "abhed-json-term-"))
      const file = join(dir, "audit.jsonl")
      const record = {
        seq: 1,
        session_id: "s",
        time: "2026-01-01T00:00:00.000Z",
        event: "tool_call",
        call_id: "c-1",
        tool: "bash",
        args: { command: hostile },
        rounds: [],
        outcome: { decision: "allow", reasons: [] },
        notes: [],
        duration_ms: 1
      }
      // Written raw: JSON allows these characters unescaped inside a string.
      writeFileSync(file, `${JSON.stringify(record)}\n`)
      const r = await runCli(["audit", "--json", file])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).not.toMatch(Deceiving)
      expect(JSON.parse(r.stdout)).toEqual(record)
    },
    Slow
  )
})
