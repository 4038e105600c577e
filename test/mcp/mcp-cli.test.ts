import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { faultyServer } from "../support/mcp-helpers.ts"

/** `abhed-ext mcp`'s command line (docs/cli.md#abhed-ext-mcp): stdout is for replies only, usage errors exit 64. */

const Slow = 60_000

describe("abhed-ext mcp: the command line", () => {
  it(
    "no server: exit 64, what to give on stderr, nothing on stdout",
    async () => {
      const r = await runCli(["mcp", "--name", "x"])
      expect(r.code).toBe(64)
      expect(r.stdout).toBe("")
      expect(r.stderr).toContain("abhed-ext mcp: give the MCP server's command after --")
    },
    Slow
  )

  it(
    "an unset ${VAR} in a --header: exit 64 naming it, never an empty token sent",
    async () => {
      const r = await runCli(
        [
          "mcp",
          "--name",
          "x",
          "--url",
          "https://example.invalid/mcp",
          "--header",
          "Authorization: Bearer ${ABHED_TEST_UNSET}"
        ],
        {
          env: { ABHED_TEST_UNSET: "" }
        }
      )
      expect(r.code).toBe(64)
      expect(r.stderr).toContain("--header Authorization: ${ABHED_TEST_UNSET} is not set")
    },
    Slow
  )

  it(
    "a request it cannot read: no reply, the reason as the last stderr line (not a stack trace), exit 1",
    async () => {
      const r = await runCli(["mcp", "--name", "x", "--", process.execPath, faultyServer], {
        input: '{"event":"session_start","session_id":"s","id":"1"}\nnot json\n'
      })
      expect(r.code, r.stderr).toBe(1)
      expect(r.stdout).toBe('{"id":"1"}\n')
      expect(r.stderr.trimEnd().split("\n").at(-1)).toMatch(
        /^abhed-ext mcp: cannot read a request: request is not JSON/
      )
    },
    Slow
  )

  it(
    "--help goes to stderr, and --completions is refused: stdout carries replies only",
    async () => {
      const help = await runCli(["mcp", "--help"])
      expect(help.code).toBe(0)
      expect(help.stdout).toBe("")
      expect(help.stderr).toContain("mcp__NAME__TOOL")
      const completions = await runCli(["--completions", "bash", "mcp", "--", "node", "server.js"])
      expect(completions.code).toBe(64)
      expect(completions.stdout).toBe("")
    },
    Slow
  )
})
