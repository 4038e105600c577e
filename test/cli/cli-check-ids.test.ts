import { describe, expect, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"

/** `abhed-ext check` reports whether an extension echoes the request's `id` (docs/design.md#wire-protocol, issue 8). */

interface Check {
  readonly id: string
  readonly status: string
  readonly details: ReadonlyArray<string>
}

const check = async (ids: "1" | "0" | "wrong") => {
  const r = await runCli(
    // A python fixture, not the bash+jq guard of attribution.test.ts: check sends over a hundred requests, and a jq
    // start per request made this file cost 14 s of CPU.
    [
      "check",
      "--json",
      "--timeout-ms",
      "15000",
      "--startup-timeout-ms",
      "30000",
      "--quiet-ms",
      "30",
      "--",
      // check gives the extension a host's baseline environment: the variable is set as a config's env would.
      "env",
      `IDS=${ids}`,
      "python3",
      "-S",
      "-E",
      `${repoRoot}test/fixtures/ids-echo.py`
    ]
  )
  const [doc] = jsonLines(r.stdout) as Array<{ readonly checks: ReadonlyArray<Check> }>
  const echoes = doc?.checks.find((c) => c.id === "echoes_ids")
  return { code: r.code, echoes }
}

describe.concurrent("abhed-ext check: echoes_ids", () => {
  it("passes when every reply echoes its request's id", async () => {
    const r = await check("1")
    expect(r.echoes).toEqual({
      id: "echoes_ids",
      title: "no reply carries another request's id",
      status: "pass",
      details: [
        'every reply echoes it: run it with "reply_ids": "required" (every stray line is then caught, and the host writes each request without first waiting a turn of its event loop: docs/protocol.md)'
      ]
    })
    expect(r.code).toBe(0)
  }, 60_000)

  it("passes with a note when no reply echoes it (the host accepts that unless reply_ids is required)", async () => {
    const r = await check("0")
    expect(r.echoes?.status).toBe("pass")
    expect(r.echoes?.details[0]).toBe("no reply echoes the request's id")
    expect(r.echoes?.details[1]).toContain("reply_ids")
    expect(r.code).toBe(0)
  }, 60_000)

  it("fails when a reply carries another id (the host would mark the extension dead)", async () => {
    const r = await check("wrong")
    expect(r.echoes?.status).toBe("fail")
    expect(r.echoes?.details[0]).toMatch(
      /^session_start: reply carries id "not-this-one", the request's is "check-session_start"/
    )
    expect(r.code).toBe(1)
  }, 60_000)
})
