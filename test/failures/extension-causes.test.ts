import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { fixture, Patient } from "../support/extension-helpers.ts"

/**
 * What a death cause says, end to end with real processes and the CLI: what reaches the audit, the host's log on
 * stderr and the notes the model reads.
 */

const tempDir = () => mkdtempSync(join(tmpdir(), "abhed-causes-"))

const configFile = (dir: string, extension: Record<string, unknown>): string => {
  const file = join(dir, "abhed.json")
  writeFileSync(file, JSON.stringify({ extensions: [{ ...Patient, ...extension }] }))
  return file
}

const python = (file: string) => ({ command: "python3", args: ["-S", "-E", fixture(file)] })

describe("a malformed reply's value never leaves the host", () => {
  const Secret = "wJalrXUtnFEMI/K7MDENG"
  const event = {
    event: "tool_result",
    session_id: "s",
    call_id: "c1",
    tool: "read",
    args: { path: "creds" },
    content: `[default]\naws_secret_access_key = ${Secret}`,
    is_error: false
  }

  it.each(["digest", "full"])(
    "a redactor answering content as an array of lines: shape only in the audit (%s), the WARN and the withheld note",
    async (mode) => {
      const dir = tempDir()
      const config = configFile(dir, {
        name: "redactor",
        ...python("leak-redactor.py"),
        events: ["tool_result"],
        on_failure: "deny"
      })
      const audit = join(dir, "audit.jsonl")
      const r = await runCli(["run", "-c", config, "--audit", audit, "--audit-content", mode], {
        input: `${JSON.stringify(event)}\n`
      })
      expect(r.code, r.stderr).toBe(0)
      const shape = 'content: expected string, got array ["<9 chars>","<45 chars>"]'
      // The model's note, the operator's warning and the audit all say what was wrong, by shape.
      expect(JSON.parse(r.stdout)).toEqual({
        event: "tool_result",
        content: `[withheld: extension redactor unavailable: malformed_reply: ${shape}]`,
        is_error: true
      })
      expect(r.stderr).toContain(`extension redactor is dead: malformed_reply: ${shape}`)
      const records = readFileSync(audit, "utf8")
      const exchanges = records
        .split("\n")
        .filter((l) => l !== "")
        .flatMap((l) => {
          const record = JSON.parse(l) as { rounds: Array<{ exchanges: Array<Record<string, unknown>> }> }
          return record.rounds.flatMap((round) => round.exchanges)
        })
      expect(exchanges.map((x) => x["error"]).filter((e) => e !== undefined)).toEqual([`malformed_reply: ${shape}`])
      for (const text of [r.stdout, r.stderr]) expect(text).not.toContain("wJalr")
      // The reply's value (the lines as an array) is nowhere. With full, the record keeps the tool's own content,
      // which came in and was withheld (the record's `input`): verbatim, as the operator opted in to.
      expect(records).not.toContain(JSON.stringify(`aws_secret_access_key = ${Secret}`))
      if (mode === "digest") expect(records).not.toContain("wJalr")
      else expect(records).toContain(JSON.stringify(event.content))
    }
  )
})

describe("an extension that dies at start says why: the error line of its stderr", () => {
  const Line = "SyntaxError: Cannot use import statement outside a module"
  const call = { event: "tool_call", session_id: "s", call_id: "c1", tool: "bash", args: { command: "ls" } }
  const node = { command: "node", args: [fixture("ext-esm-in-cjs.cjs")] }

  it.each(["digest", "full"] as const)(
    "run: in the warning, in the audit's stderr (%s: a digest unless full), never in the model's reasons",
    async (mode) => {
      const dir = tempDir()
      const config = configFile(dir, { name: "guard-ts", ...node, on_failure: "deny" })
      const audit = join(dir, "audit.jsonl")
      const r = await runCli(["run", "-c", config, "--audit", audit, "--audit-content", mode], {
        input: `${JSON.stringify(call)}\n`
      })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toContain(`extension guard-ts is dead: exited (code 1): ${Line}`)
      const out = JSON.parse(r.stdout) as { decision: string; reasons: Array<{ reason: string }> }
      expect(out.decision).toBe("deny")
      expect(out.reasons).toEqual([
        { extension: "guard-ts", reason: "extension guard-ts unavailable: exited (code 1)" }
      ])
      const records = readFileSync(audit, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { event: string; rounds: Array<{ exchanges: Array<Record<string, unknown>> }> })
      const exchange = records.find((x) => x.event === "tool_call")?.rounds[0]?.exchanges[0]
      expect(exchange?.["error"]).toBe("exited (code 1)")
      expect(exchange?.["stderr"]).toEqual(
        mode === "full" ? Line : { sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: Buffer.byteLength(Line) }
      )
      if (mode === "digest") expect(records.join("\n")).not.toContain("SyntaxError")
    }
  )

  it("check: the report names the error line, which the stack's last lines hide", async () => {
    const r = await runCli([
      "check",
      "--startup-timeout-ms",
      "30000",
      "--timeout-ms",
      "15000",
      "--",
      node.command,
      ...node.args
    ])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(`extension error (its stderr): ${Line}`)
    const json = await runCli([
      "check",
      "--json",
      "--startup-timeout-ms",
      "30000",
      "--timeout-ms",
      "15000",
      "--",
      node.command,
      ...node.args
    ])
    expect((JSON.parse(json.stdout) as { stderr_error?: string }).stderr_error).toBe(Line)
  })
})
