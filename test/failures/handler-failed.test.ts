import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, runCli } from "../support/cli-helpers.ts"
import { fixture, Patient } from "../support/extension-helpers.ts"

/**
 * An extension whose own code fails on one request (an SDK handler that throws) answers `failed`: the host applies
 * its on_failure to that request alone, and the extension answers the next (docs/failures.md). Before, the SDK
 * answered `{}`: a redactor that threw on output an attacker shaped let that output through, whatever its
 * on_failure said.
 */

const Token = "tok-9f8e7d6c5b4a"

const result = (content: string) =>
  JSON.stringify({ event: "tool_result", tool: "http", args: { url: "x" }, content, is_error: false })

const run = async (onFailure: "ignore" | "deny") => {
  const dir = mkdtempSync(join(tmpdir(), "abhed-handler-failed-"))
  const config = join(dir, "abhed.json")
  const audit = join(dir, "audit.jsonl")
  writeFileSync(
    config,
    JSON.stringify({
      extensions: [
        {
          ...Patient,
          name: "redactor",
          command: process.execPath,
          args: [fixture("sdk-json-redactor.ts")],
          events: ["tool_result"],
          on_failure: onFailure
        }
      ]
    })
  )
  const r = await runCli(["run", "--config", config, "--audit", audit], {
    input: [
      result(JSON.stringify({ token: Token })),
      // Not JSON, on purpose: the redactor's JSON.parse throws, and the token would pass unredacted.
      result(`{"token": "${Token}", oops`),
      result(JSON.stringify({ token: Token, n: 2 }))
    ].join("\n")
  })
  const exchanges = readFileSync(audit, "utf8")
    .trim()
    .split("\n")
    .map(
      (line) =>
        JSON.parse(line) as { event: string; rounds: Array<{ exchanges: Array<{ status: string; error?: string }> }> }
    )
    .filter((record) => record.event === "tool_result")
    .map((record) => record.rounds[0]?.exchanges[0])
  return { ...r, out: jsonLines(r.stdout) as Array<Record<string, unknown>>, exchanges }
}

describe("a handler that throws on one request (real processes, the SDK)", () => {
  it("under on_failure deny: that output is withheld, the extension lives and redacts the next", async () => {
    const r = await run("deny")
    expect(r.code, r.stderr).toBe(0)
    expect(r.out.map((o) => String(o["content"]).includes(Token))).toEqual([false, false, false])
    expect(r.out[1]).toMatchObject({ is_error: true })
    expect(String(r.out[1]?.["content"])).toContain(
      "redactor could not answer: the tool_result handler failed (its error is on the extension's stderr)"
    )
    expect(String(r.out[2]?.["content"])).toContain("[redacted]")
    expect(r.exchanges.map((x) => x?.status)).toEqual(["replied", "failed", "replied"])
    // The operator is told, and what the handler read stays out of what the host repeats.
    expect(r.stderr).toContain("extension redactor could not answer a tool_result request")
    expect(r.stderr).not.toContain(Token)
  })

  it("under on_failure ignore (the default): that output goes on as it was, as the operator chose, and it is said", async () => {
    const r = await run("ignore")
    expect(r.code, r.stderr).toBe(0)
    expect(r.out.map((o) => String(o["content"]).includes(Token))).toEqual([false, true, false])
    expect(r.exchanges.map((x) => x?.status)).toEqual(["replied", "failed", "replied"])
    expect(r.stderr).toContain("extension redactor could not answer a tool_result request")
  })
})
