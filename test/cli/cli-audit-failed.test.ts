import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, runCli } from "../support/cli-helpers.ts"
import { fixture, Patient } from "../support/extension-helpers.ts"

/**
 * A real extension that answers `failed` with words quoting what it read (docs/failures.md): under on_failure
 * ignore the call goes on, and `run --audit` keeps its words as the exchange's `failed` (a digest by default,
 * verbatim with --audit-content full), which `audit` shows, escaped.
 */

// What it read, with a terminal escape in it: its words quote it.
const Path = "odd-AKIA0123456789\u001b[2J"
// Its words as the host repeats them: printable.
const Shown = "cannot parse path odd-AKIA0123456789\\x1b[2J"

const session = async (content: "digest" | "full") => {
  const dir = mkdtempSync(join(tmpdir(), "abhed-audit-failed-"))
  const config = join(dir, "abhed.json")
  const audit = join(dir, "audit.jsonl")
  writeFileSync(
    config,
    JSON.stringify({
      extensions: [
        {
          ...Patient,
          name: "parser",
          command: "bash",
          args: [fixture("ext-failed-words.sh")],
          events: ["tool_call"],
          on_failure: "ignore"
        }
      ]
    })
  )
  const r = await runCli(["run", "--config", config, "--audit", audit, "--audit-content", content], {
    input: `${JSON.stringify({ event: "tool_call", call_id: "c-1", tool: "read", args: { path: Path } })}\n`
  })
  expect(r.code, r.stderr).toBe(0)
  // Under on_failure ignore the call goes on.
  expect(jsonLines(r.stdout)).toMatchObject([{ decision: "allow" }])
  const text = readFileSync(audit, "utf8")
  const call = text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { event: string; rounds: Array<{ exchanges: Array<Record<string, unknown>> }> })
    .find((record) => record.event === "tool_call")
  const shown = await runCli(["audit", audit, "--call", "c-1"])
  expect(shown.code, shown.stderr).toBe(0)
  return { text, exchange: call?.rounds[0]?.exchanges[0], audit: shown.stdout }
}

describe("run --audit, then audit: a reply that says failed, with its words", () => {
  it("by default: the words as {sha256, bytes}, not in the file; audit says their digest", async () => {
    const { audit, exchange, text } = await session("digest")
    const digest = { sha256: createHash("sha256").update(Shown).digest("hex"), bytes: Buffer.byteLength(Shown) }
    expect(exchange).toMatchObject({
      extension: "parser",
      status: "failed",
      error: "failed (the extension could not answer)",
      failed: digest
    })
    // Not in the exchange: the args, which the audit always keeps verbatim, hold the path.
    expect(JSON.stringify(exchange)).not.toContain("AKIA")
    expect(text).not.toContain("cannot parse")
    expect(audit).toContain(
      `FAILED: failed (the extension could not answer); it said: ${digest.bytes} bytes, sha256 ${digest.sha256.slice(0, 12)}… (kept with --audit-content full)`
    )
  })

  it("with --audit-content full: the words verbatim (printable), and audit shows them escaped", async () => {
    const { audit, exchange } = await session("full")
    expect(exchange).toMatchObject({ status: "failed", failed: Shown })
    expect(audit).toContain(`FAILED: failed (the extension could not answer); it said: ${Shown}`)
    expect(audit).not.toContain("\u001b")
  })
})
