import { describe, expect, it } from "vitest"
import { jsonLines, runCli } from "../support/cli-helpers.ts"
import { fixture, within } from "../support/extension-helpers.ts"
import { MaxStrayLines } from "@abhed/cli"

/**
 * What an extension writes cannot take over the CLI (issues 22.7, 22.9): a stdout flood ends in bounded time and
 * memory with a FAIL that names it; escape sequences on its stderr are shown escaped, in `check` and in
 * `run --log-level debug`, so they cannot retitle the terminal, clear the FAIL lines away or write the clipboard.
 */

/** Every character a terminal acts on, but tab and the line breaks between lines. */
const controls = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/

describe.concurrent("abhed-ext check against a stdout flood (issue 22.7)", () => {
  it("yes '{}' ends, bounded, with a FAIL naming the flood and at most MaxStrayLines lines kept", async () => {
    const started = Date.now()
    const r = await runCli(["check", "--json", "--quiet-ms", "50", "--grace-ms", "0", "--", "yes", "{}"])
    const elapsed = Date.now() - started
    expect(r.code).toBe(1)
    const [doc] = jsonLines(r.stdout) as Array<{
      checks: ReadonlyArray<{ id: string; status: string; details: ReadonlyArray<string> }>
    }>
    const one = doc?.checks.find((c) => c.id === "one_reply_per_request")
    expect(one?.status).toBe("fail")
    expect(one?.details[0]).toMatch(/^a flood on stdout: \d+ lines no request asked for \(the first 1000 kept\)$/)
    // The kept lines are capped (memory): the flood line, then at most MaxStrayLines quoted ones.
    expect(one?.details.length).toBeLessThanOrEqual(MaxStrayLines + 1)
    // Before, it never ended (4.2 GB in 300 s). About a dozen quiet windows and one grace: seconds.
    expect(elapsed).toBeLessThan(within(10_000))
  }, 300_000)

  it("a flood of non-JSON lines ends at the startup deadline, not never", async () => {
    const started = Date.now()
    const r = await runCli(["check", "--json", "--startup-timeout-ms", "2000", "--grace-ms", "0", "--", "yes", "hello"])
    const elapsed = Date.now() - started
    expect(r.code).toBe(1)
    const [doc] = jsonLines(r.stdout) as Array<{ checks: ReadonlyArray<{ id: string; status: string }> }>
    expect(doc?.checks.find((c) => c.id === "no_stdout_noise")?.status).toBe("fail")
    expect(elapsed).toBeLessThan(within(2 * 2000))
  }, 300_000)
})

describe.concurrent("an extension's escape sequences are shown escaped (issue 22.9)", () => {
  const script = fixture("cli-escapes.sh")

  it("check: the stderr tail, one line per line written, control characters escaped", async () => {
    const r = await runCli(["check", "--timeout-ms", "15000", "--startup-timeout-ms", "30000", "--", "bash", script])
    expect(r.code).toBe(1)
    expect(r.stdout).not.toMatch(controls)
    const tail = r.stdout.split("\n").filter((l) => l.startsWith("  | "))
    expect(tail.slice(0, 5)).toEqual([
      "  | \\x1b]0;PWNED\\x07title",
      "  | \\x1b[2J\\x1b[Hclear",
      "  | \\x1b]52;c;cm0gLXJmIC8=\\x07clip\ttab",
      "  | C1 \\u009b bidi \\u202e DEL \\x7f cr",
      "  | overwritten"
    ])
  }, 300_000)

  it("run --log-level debug: each stderr line logged with its control characters escaped", async () => {
    const config = JSON.stringify({ extensions: [{ name: "esc", command: "bash", args: [script] }] })
    const events = `${fixture("cli-escapes-events.jsonl")}`
    const r = await runCli(["--log-level", "debug", "run", "-c", "-", events], { input: config })
    expect(r.code).toBe(0)
    expect(r.stderr).not.toMatch(controls)
    for (const line of [
      "\\x1b]0;PWNED\\x07title",
      "\\x1b[2J\\x1b[Hclear",
      "\\x1b]52;c;cm0gLXJmIC8=\\x07clip\ttab",
      "C1 \\u009b bidi \\u202e DEL \\x7f cr"
    ]) {
      expect(r.stderr).toContain(`DEBUG (#`)
      expect(r.stderr).toContain(`: ${line} {`)
    }
  }, 300_000)
})
