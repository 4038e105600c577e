import { readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname } from "node:path"
import { describe, expect, it } from "vitest"
import { bin, repoRoot, runCli } from "../support/cli-helpers.ts"

const session = readFileSync(`${repoRoot}docs/examples/session.jsonl`, "utf8").split("\n")

describe("abhed-ext demo", () => {
  it("exits 0 and prints every event of the session, plain when piped, then a summary", async () => {
    // From another directory: the demo finds its examples from its own location.
    const r = await runCli(["demo"], { cwd: tmpdir() })
    expect(r.code, r.stderr).toBe(0)
    session.forEach((text, i) => {
      if (text.trim() === "") return
      const event = (JSON.parse(text) as { event: string }).event
      expect(r.stdout).toContain(`── line ${i + 1}: ${event}`)
    })
    expect(r.stdout).toContain("── host: session_start")
    expect(r.stdout).toMatch(/→ DENY \(secrets-guard: /)
    expect(r.stdout).toMatch(/→ ASK /)
    // block-secrets has a matcher (read of *secret*): written only that call, shown skipped on the others.
    expect(r.stdout).toMatch(/block-secrets +— +not matched: skipped by its match rules, not written/)
    expect(r.stdout).toMatch(/block-secrets +\d+ ms +BLOCK "secrets are off limits"/)
    expect(r.stdout).toMatch(/Summary: 30 events\. Of 14 tool calls, \d+ denied, \d+ asked/)
    expect(r.stdout).not.toContain("\u001b[")
    // The examples beside the CLI that runs: from source docs/examples, the tests' bundle its own (cli-bundle.ts), as
    // the published package its examples/.
    const examples = bin.endsWith(".mjs") ? `${dirname(bin)}/examples/` : `${repoRoot}docs/examples/`
    expect(r.stdout).toContain(`extensions from ${examples}abhed.json`)
  })

  it("is what abhed-ext does with no arguments", async () => {
    const r = await runCli([])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("── line 1: session_start")
    expect(r.stdout).toContain("Summary:")
  })

  it("--help describes it, with examples", async () => {
    const r = await runCli(["demo", "--help"])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("EXAMPLES")
    expect(r.stdout).toContain("pnpm demo")
    const root = await runCli(["--help"])
    expect(root.code).toBe(0)
    for (const s of ["run", "check", "demo", "EXAMPLES", "Exit codes"]) expect(root.stdout).toContain(s)
  })
})
