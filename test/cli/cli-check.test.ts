import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bin, jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"
import { isLive } from "../support/extension-helpers.ts"

interface CheckJson {
  readonly ok: boolean
  readonly checks: ReadonlyArray<{
    readonly id: string
    readonly status: string
    readonly details: ReadonlyArray<string>
  }>
}

const report = (stdout: string): CheckJson => {
  const [doc] = jsonLines(stdout)
  // The --json report is one document of this shape (CheckReport.renderJson); the assertions below check it.
  return doc as CheckJson
}

const failed = (r: CheckJson) => r.checks.filter((c) => c.status === "fail").map((c) => c.id)

const examples = `${repoRoot}docs/examples/`
const config = JSON.parse(readFileSync(`${examples}abhed.json`, "utf8")) as {
  readonly extensions: ReadonlyArray<{
    name: string
    command: string
    args?: Array<string>
    env?: Record<string, string>
  }>
}

/**
 * Patient timeouts and grace (a loaded machine starts node and python3 slowly, and bash+jq answers slowly): they
 * cost nothing, since a passing check waits for none of them. Only the fixtures that never answer get short ones.
 */
const patient = ["--timeout-ms", "15000", "--startup-timeout-ms", "30000"]
const fast = [...patient, "--grace-ms", "15000", "--quiet-ms", "30"]

describe.concurrent("abhed-ext check passes on every example extension", () => {
  for (const x of config.extensions) {
    it(`${x.name}: ${x.command} ${(x.args ?? []).join(" ")}`, async () => {
      // The config's env, as the host would set it (check gives the extension a host's baseline, no more).
      const env = Object.entries(x.env ?? {}).map(([k, v]) => `${k}=${v}`)
      const command = env.length === 0 ? [x.command] : ["env", ...env, x.command]
      const r = await runCli(["check", "--json", ...fast, "--", ...command, ...(x.args ?? [])], { cwd: examples })
      const doc = report(r.stdout)
      expect(failed(doc), JSON.stringify(doc.checks, null, 1)).toEqual([])
      expect(doc.ok).toBe(true)
      expect(doc.checks.map((c) => c.status)).toEqual(Array(11).fill("pass"))
      expect(r.code).toBe(0)
    })
  }
})

const fixture = (name: string) => ["bash", `test/fixtures/cli-${name}.sh`]
/** The grace is waited out only by no-exit (the others exit as soon as stdin closes). */
const common = ["--startup-timeout-ms", "30000", "--grace-ms", "400"]
/** For the fixtures that never answer some request: the timeout must pass, so it is short. */
const short = [...common, "--timeout-ms", "400", "--quiet-ms", "30"]
const long = [...common, "--timeout-ms", "15000", "--quiet-ms", "30"]
/** Writing 17 MiB takes a while on a loaded machine (more than 5 s beside this file's other checks at load 25): a
 * timeout that lets it arrive (the host stops reading there). */
const tooLongFlags = [...common, "--timeout-ms", "20000", "--quiet-ms", "30"]

/**
 * `check --json` runs, one per distinct command line: tests that assert on the same run share it (each run starts
 * the CLI and the fixture twice; too-long's writes 17 MiB per process).
 */
const jsonRuns = new Map<string, ReturnType<typeof runCli>>()
const jsonRun = (flags: ReadonlyArray<string>, name: string) => {
  const args = ["check", "--json", ...flags, "--", ...fixture(name)]
  const key = args.join("\0")
  const run = jsonRuns.get(key) ?? runCli(args)
  jsonRuns.set(key, run)
  return run
}

describe.concurrent("abhed-ext check fails, naming the violated check", () => {
  const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
    ["no-unknown", "unknown_event", short],
    ["noisy", "no_stdout_noise", long],
    // Its second reply follows the first at once, but a loaded machine may deliver it a while later.
    ["twice", "one_reply_per_request", [...common, "--timeout-ms", "15000", "--quiet-ms", "200"]],
    ["hang", "replies_within_timeout", short],
    // Judged by the host's own line reader: a line of spaces, a line that is not UTF-8 and one over 16 MiB are what
    // the host kills an extension for, not lines to skip or decode leniently.
    ["spaces", "no_stdout_noise", long],
    ["not-utf8", "no_stdout_noise", short],
    ["too-long", "no_stdout_noise", tooLongFlags],
    ["no-exit", "clean_exit", long]
  ]
  for (const [name, check, flags] of cases) {
    it(`${name} → ${check}`, async () => {
      const json = await jsonRun(flags, name)
      expect(json.code).toBe(1)
      const doc = report(json.stdout)
      expect(doc.ok).toBe(false)
      expect(failed(doc)).toContain(check)
      // Text mode names it too, on a FAIL line.
      const text = await runCli(["check", ...flags, "--", ...fixture(name)])
      expect(text.code).toBe(1)
      expect(text.stdout).toMatch(new RegExp(`^FAIL  ${check}: `, "m"))
    })
  }

  it("a well-behaved fixture fails none of the checks the others fail", async () => {
    // no-exit behaves in every way but the exit: only clean_exit may fail.
    const r = await jsonRun(long, "no-exit")
    expect(failed(report(r.stdout))).toEqual(["clean_exit"])
  })

  it("a line over 16 MiB is reported once per process (the host stops reading there), not once per chunk after it", async () => {
    const r = await jsonRun(tooLongFlags, "too-long")
    const noise = report(r.stdout).checks.find((c) => c.id === "no_stdout_noise")?.details ?? []
    const tooLong = noise.filter((d) => d.includes("a line longer than 16777216 bytes"))
    // Both processes (one request at a time, then the burst) get a tool_result: at most one line each.
    expect(tooLong.length).toBeGreaterThan(0)
    expect(tooLong.length).toBeLessThanOrEqual(2)
  })

  it("a failing report larger than a pipe holds reaches a slow reader whole (exit 1 waits for stdout)", async () => {
    // The reader starts a second late: before, exit 1 came at once and the reader got the first 64 KiB.
    const command = `"${process.execPath}" "${bin}" check --json ${long.join(" ")} -- bash test/fixtures/cli-noisy-big.sh; echo "exit $?" >&2`
    const r = await new Promise<{ readonly stdout: string; readonly stderr: string }>((resolve, reject) => {
      const shell = spawn("bash", ["-c", `( ${command} ) | ( sleep 1; cat )`], {
        cwd: repoRoot,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      shell.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
      shell.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
      shell.on("error", reject)
      shell.on("close", () => resolve({ stdout, stderr }))
    })
    expect(r.stderr).toContain("exit 1")
    const doc = report(r.stdout) // parses: the whole document arrived
    // Several pipes' worth (64 KiB each), though only the first 1000 stray lines are kept (a flood is counted).
    expect(r.stdout.length).toBeGreaterThan(128 * 1024)
    expect(failed(doc)).toContain("no_stdout_noise")
  })

  it("an extension killed by a signal when stdin closes fails clean_exit, naming the signal", async () => {
    const r = await runCli(["check", "--json", ...long, "--", ...fixture("killed")])
    const doc = report(r.stdout)
    expect(failed(doc)).toEqual(["clean_exit"])
    expect(doc.checks.find((c) => c.id === "clean_exit")?.details).toEqual(["died by SIGKILL"])
  })

  it("a command that cannot start fails `starts`", async () => {
    const r = await runCli(["check", "--json", ...long, "--", "abhed-no-such-command-xyz"])
    expect(r.code).toBe(1)
    expect(failed(report(r.stdout))).toEqual(["starts"])
  })
})

describe("abhed-ext check and a helper that left the extension's session", () => {
  it("a passing check exits when it is done, not when a setsid helper holding the extension's stdout dies", async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), "abhed-check-")), "helper.pid")
    const r = await runCli([
      "check",
      "--json",
      ...long,
      "--",
      "env",
      `HELPER_PID_FILE=${pidFile}`,
      ...fixture("setsid-helper")
    ])
    const helper = Number(readFileSync(pidFile, "utf8"))
    try {
      expect(report(r.stdout).ok).toBe(true)
      expect(r.code).toBe(0)
      // It sleeps 60 s holding the pipe: check used to wait for it. Still alive here, so check did not.
      expect(isLive(helper)).toBe(true)
    } finally {
      process.kill(helper, "SIGKILL")
    }
  }, 60_000)
})

describe("abhed-ext check --help", () => {
  it("documents flags, exit codes and examples", async () => {
    const r = await runCli(["check", "--help"])
    expect(r.code).toBe(0)
    for (const s of ["--timeout-ms", "--json", "EXAMPLES", "abhed-ext check -- bash", "Exit codes"])
      expect(r.stdout).toContain(s)
  })
})

describe("abhed-ext check --call", () => {
  it("sends the given call as the sample tool_call and tool_result, and prints what the extension said to it", async () => {
    // A guard that only objects to reads of *secret* (as block-secrets.sh, without its jq starts: a check sends over a
    // hundred requests): the default sample (bash ls) would never show its block.
    const call = JSON.stringify({ tool: "read", args: { path: "config/secrets.json" } })
    const r = await runCli(["check", ...fast, "--call", call, "--", ...fixture("block-reads")])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(
      `tool_call read {"path":"config/secrets.json"} → {"block":true,"reason":"secrets are off limits"}`
    )
    // Without --call nothing of the sort is printed (`cat` answers as block-secrets would to the default sample,
    // without a jq start per request).
    const plain = await runCli(["check", ...fast, "--", "cat"], { cwd: examples })
    expect(plain.code, plain.stderr).toBe(0)
    expect(plain.stdout).not.toContain("tool_call read")
  })

  it('rejects a --call that is not {"tool": non-empty string, "args": object}', async () => {
    for (const bad of ["nope", '{"tool":""}', '{"tool":"bash","args":[]}']) {
      const r = await runCli(["check", "--call", bad, "--", "bash", "block-secrets.sh"], { cwd: examples })
      expect(r.code).toBe(64) // bad usage
      expect(r.stdout + r.stderr).toContain("--call")
    }
  })
})

describe.concurrent("abhed-ext check: the extension gets the environment a host would give it", () => {
  // A variable of the user's shell (PYTHONUNBUFFERED, a token) that the host would not pass must not make an
  // extension pass here that the host then marks dead.
  const script = (() => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-check-env-"))
    const file = join(dir, "needs-var.sh")
    writeFileSync(
      file,
      '[ -n "$ABHED_TEST_SHELL_ONLY" ] || { echo "needs ABHED_TEST_SHELL_ONLY" >&2; exit 1; }\n' +
        "while IFS= read -r line; do echo '{}'; done\n"
    )
    return file
  })()

  it("a variable of this shell only is not passed: the check fails as the host would", async () => {
    const r = await runCli(["check", "--json", "--", "bash", script], { env: { ABHED_TEST_SHELL_ONLY: "1" } })
    expect(r.code).toBe(1)
    expect(failed(report(r.stdout))).toContain("one_reply_per_request")
  })

  it("given on the command line, as a config's env would give it, it passes", async () => {
    const r = await runCli(["check", "--json", "--", "env", "ABHED_TEST_SHELL_ONLY=1", "bash", script])
    expect(failed(report(r.stdout))).toEqual([])
    expect(r.code).toBe(0)
  })
})
