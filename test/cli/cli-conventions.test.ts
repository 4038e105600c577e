import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"

/**
 * The command-line conventions of docs/cli.md, through the real CLI: exit codes, where usage errors and help go,
 * `-` for stdin, colour that follows NO_COLOR / FORCE_COLOR / the terminal, the version from package.json.
 */

const config = "docs/examples/abhed.json"
const guard = "test/fixtures/cli-guard.json"
const call = `{"event":"tool_call","tool":"read","args":{"path":".env"}}\n`
const ansi = /\u001b\[\d+m/

/** The environment without any colour setting the test runner may carry. */
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const { FORCE_COLOR: _f, NO_COLOR: _n, ...rest } = process.env
  return { ...rest, ...extra }
}

describe.concurrent("usage errors: stderr, one problem line and a hint, exit 64", () => {
  for (const [args, problem, hint] of [
    [["check"], "abhed-ext check: Missing required argument: command", "`abhed-ext check --help` for more"],
    [
      ["run", "--config", config, "--bogus"],
      "abhed-ext run: Unrecognized flag: --bogus",
      "`abhed-ext run --help` for more"
    ],
    [["no-such-command"], 'abhed-ext: Unknown subcommand "no-such-command"', "`abhed-ext --help` for more"],
    [
      ["check", "--timeout-ms=0", "--", "cat"],
      "abhed-ext check: Invalid value for flag --timeout-ms",
      "`abhed-ext check --help` for more"
    ]
  ] as const) {
    it(args.join(" "), async () => {
      const r = await runCli(args, { env: env() })
      expect(r.code).toBe(64)
      expect(r.stdout).toBe("")
      const lines = r.stderr.trim().split("\n")
      expect(lines).toHaveLength(2)
      expect(lines[0]).toContain(problem)
      expect(lines[1]).toContain(hint)
    })
  }
})

describe.concurrent("usage errors: a program's own flag without -- says where it belongs", () => {
  for (const [args, program] of [
    [["check", "python3", "-u", "guard.py"], "the extension"],
    [["hook", "--format", "claude", "python3", "-u", "hook.py"], "the hook"],
    [["mcp", "npx", "-y", "server"], "the MCP server"]
  ] as const) {
    it(args.join(" "), async () => {
      const r = await runCli(args, { env: env() })
      expect(r.code).toBe(64)
      expect(r.stdout).toBe("")
      const command = args[0]
      expect(r.stderr.trim().split("\n")).toEqual([
        expect.stringContaining(`abhed-ext ${command}: Unrecognized flag:`),
        `abhed-ext ${command}: ${program}'s own flags go after --: abhed-ext ${command} [flags] -- COMMAND [ARGS...]`,
        `(\`abhed-ext ${command} --help\` for more)`
      ])
    })
  }
})

describe.concurrent("exit codes stay apart", () => {
  it("an invalid config is 2", async () => {
    const r = await runCli(["run", "--config", "test/fixtures/cli-no-such-config.json"], { env: env() })
    expect(r.code).toBe(2)
  })
  it("an unreadable events file is 1", async () => {
    const r = await runCli(["run", "--config", config, "test/fixtures/cli-no-such-events.jsonl"], { env: env() })
    expect(r.code).toBe(1)
  })
  it("a finished run is 0", async () => {
    // One bash guard, not the example config's nine extensions (about 2 s of CPU to start and stop).
    const r = await runCli(["run", "--config", guard], { input: call, env: env() })
    expect(r.code).toBe(0)
  })
})

describe.concurrent("- is stdin", () => {
  it("run --config FILE - reads the events from stdin", async () => {
    // The one bash guard again: it blocks reads of *secret* paths, so the deny can only come from the line on stdin.
    const secret = `{"event":"tool_call","tool":"read","args":{"path":"my-secret.txt"}}\n`
    const r = await runCli(["run", "--config", guard, "-"], { input: secret, env: env() })
    expect(r.code).toBe(0)
    expect(jsonLines(r.stdout)).toEqual([expect.objectContaining({ event: "tool_call", decision: "deny" })])
  })
})

describe.concurrent("colour follows NO_COLOR, FORCE_COLOR and the terminal", () => {
  // `cat` answers each request with itself, which passes every check: as styled as any extension's report, and
  // without the bash+jq example's jq start per request (5 s of CPU per check).
  const check = ["check", "--", "cat"]
  for (const [args, extra, styled] of [
    // One demo (it starts every example extension: seconds of CPU); check over `cat` for the rest. The demo
    // piped is plain in cli-demo.test.ts.
    [["demo"], { FORCE_COLOR: "1" }, true],
    [check, {}, false], // piped: not a terminal
    [check, { NO_COLOR: "1" }, false],
    [check, { FORCE_COLOR: "1" }, true],
    [check, { FORCE_COLOR: "0" }, false]
  ] as const) {
    it(`${args[0]} ${JSON.stringify(extra)}: ${styled ? "styled" : "plain"}`, async () => {
      const r = await runCli(args, { env: env(extra) })
      expect(r.code).toBe(0)
      if (styled) expect(r.stdout).toMatch(ansi)
      else expect(r.stdout).not.toMatch(ansi)
    })
  }
})

describe.concurrent("--version", () => {
  it("prints the version of @abhed/cli's package.json", async () => {
    const manifest: unknown = JSON.parse(readFileSync(`${repoRoot}packages/cli/package.json`, "utf8"))
    const version =
      typeof manifest === "object" && manifest !== null && "version" in manifest ? String(manifest.version) : ""
    const r = await runCli(["--version"], { env: env() })
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(`abhed-ext v${version}`)
  })

  it.each(["run", "hook", "mcp"])(
    "%s -v: on stderr, as its help (its stdout carries JSON lines and nothing else: -v is no verbose)",
    async (command) => {
      const r = await runCli([command, "-v"], { env: env() })
      expect(r.code).toBe(0)
      expect(r.stdout).toBe("")
      expect(r.stderr.trim()).toMatch(/^abhed-ext v\d/)
    }
  )
})
