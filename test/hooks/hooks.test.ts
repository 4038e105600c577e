import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { describe, expect, it } from "vitest"
import { killTree } from "../../packages/cli/src/hook/ProcessTree.ts"
import { bin, type CliResult, jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"

/**
 * Real Claude Code and Gemini CLI hooks (test/fixtures/hooks, in the peers' documented formats) run as extensions
 * through `abhed-ext hook`, decided by `abhed-ext run` (docs/hooks.md).
 */

const fixture = (name: string) => `${repoRoot}test/fixtures/hooks/${name}`
type Line = Record<string, unknown>

/**
 * One adapter extension: `abhed-ext hook FLAGS -- COMMAND…`, started with this Node. Patient bounds (a loaded machine
 * starts python3 slowly) unless the test sets its own `--timeout-ms`: only the timeout test does.
 */
const adapter = (name: string, flags: ReadonlyArray<string>, command: ReadonlyArray<string>, extra: Line = {}) => {
  const patient = !flags.includes("--timeout-ms")
  return {
    name,
    command: process.execPath,
    args: [bin, "hook", ...flags, ...(patient ? ["--timeout-ms", "20000"] : []), "--", ...command],
    // The adapter echoes every request's id: a reply without it would kill the extension.
    reply_ids: "required",
    ...(patient ? { timeout_ms: 30_000, startup_timeout_ms: 40_000 } : {}),
    ...extra
  }
}

const writeConfig = (config: unknown): string => {
  const dir = mkdtempSync(join(tmpdir(), "abhed-hooks-"))
  const file = join(dir, "abhed.json")
  writeFileSync(file, JSON.stringify(config, null, 2))
  return file
}

const call = (command: string, extra: Line = {}) =>
  JSON.stringify({ event: "tool_call", tool: "bash", args: { command }, ...extra })
const lines = (...ls: ReadonlyArray<string>) => `${ls.join("\n")}\n`

/**
 * Processes whose command line contains `marker` (with `leading`, starts with it: the helpers `exec -a MARKER`, not
 * the adapter that has it among its arguments), from /proc (the test's own process excluded).
 */
const processesWith = (marker: string, leading = false): Array<string> => {
  const found: Array<string> = []
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")
      if (leading ? cmdline.startsWith(marker) : cmdline.includes(marker)) found.push(`${pid}: ${cmdline}`)
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/**
 * The processes `processesWith(marker, true)` finds once those the run killed have had time to die: a SIGKILL is
 * sent before the reply that reports it, but the killed process ends when the kernel next schedules it, which on a
 * loaded machine can come after the reply has been read. Polled, bounded at 5 s (the hooks sleep 300 s: one that
 * was not killed is still found).
 */
const survivorsOf = async (marker: string): Promise<Array<string>> => {
  for (let i = 0; i < 200 && processesWith(marker, true).length > 0; i++) await new Promise((r) => setTimeout(r, 25))
  return processesWith(marker, true)
}

/** `abhed-ext run` kept open: one request at a time, each answered before the next is sent; `end` closes stdin. */
const liveRun = (config: string) => {
  const child = spawn(process.execPath, [bin, "run", "--config", config], {
    cwd: repoRoot,
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  const replies = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve))
  return {
    send: async (line: string): Promise<Line> => {
      child.stdin.write(`${line}\n`)
      const next = await replies.next()
      if (next.done === true) throw new Error(`run ended early: ${stderr}`)
      return JSON.parse(next.value) as Line
    },
    end: () => {
      child.stdin.end()
      return closed
    }
  }
}

describe("Claude Code hooks through abhed-ext hook", () => {
  const config = writeConfig({
    extensions: [
      adapter(
        "git-guard",
        ["--format", "claude", "--matcher", "Bash"],
        ["python3", fixture("project/.claude/hooks/git_guard.py")],
        { events: ["tool_call"] }
      ),
      adapter("push-ask", ["--format", "claude", "--matcher", "Bash"], ["bash", fixture("push_ask.sh")], {
        events: ["tool_call"]
      }),
      adapter(
        "env-guard",
        ["--format", "claude", "--matcher", "Read|Write|Edit"],
        ["bash", fixture("project/.claude/hooks/env_guard.sh")],
        {
          events: ["tool_call"]
        }
      ),
      adapter("secret-output", ["--format", "claude"], ["python3", fixture("secret_output.py")], {
        events: ["tool_result"]
      }),
      adapter("broken", ["--format", "claude"], ["bash", fixture("broken.sh")], { events: ["tool_call"] })
    ],
    policy: { ask: [{ tool: "bash", args: { command: "git *" }, reason: "git needs a look" }] }
  })

  /**
   * The config above run once, for the two tests below: six calls (lines 0-5), then two results for its one
   * tool_result hook (lines 6-7). Its tool_call hooks are not asked about the results (their events).
   */
  const content = "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"
  let shared: Promise<CliResult> | undefined
  const sharedRun = () =>
    (shared ??= runCli(["run", "--config", config], {
      input: lines(
        call("git status"),
        call("rm -rf /etc"),
        call("git push origin main"),
        JSON.stringify({ event: "tool_call", tool: "read", args: { path: "config/.env" } }),
        JSON.stringify({ event: "tool_call", tool: "read", args: { path: "src/app.ts" } }),
        call("ls"),
        JSON.stringify({
          event: "tool_result",
          tool: "bash",
          args: { command: "cat creds" },
          content,
          is_error: false
        }),
        JSON.stringify({ event: "tool_result", tool: "bash", args: { command: "ls" }, content: "a b", is_error: false })
      )
    }))

  it("deny and ask land with the hook's reason; allow lifts nothing; exit 2 blocks with stderr; exit 1 is no opinion", async () => {
    const r = await sharedRun()
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    // One reply per line: the six calls' and the two results'.
    expect(out).toHaveLength(8)
    // The hook answered permissionDecision "allow" for git: the policy's ask still stands, and only the policy's reason.
    expect(out[0]).toMatchObject({ decision: "ask", reasons: [{ extension: "policy", reason: "git needs a look" }] })
    expect(out[1]).toMatchObject({
      decision: "deny",
      reasons: [{ extension: "git-guard", reason: "rm -rf on an absolute path is not allowed" }]
    })
    // Asked by the hook and by the policy: both reasons, in name order.
    expect(out[2]).toMatchObject({ decision: "ask" })
    expect(out[2]?.["reasons"]).toEqual([
      { extension: "policy", reason: "git needs a look" },
      { extension: "push-ask", reason: "pushing publishes commits" }
    ])
    // The hook reads .tool_input.file_path: our `path` reaches it under the peer's name.
    expect(out[3]).toMatchObject({
      decision: "deny",
      reasons: [{ extension: "env-guard", reason: "Blocked: config/.env may hold secrets" }]
    })
    expect(out[3]?.["args"]).toEqual({ path: "config/.env" })
    expect(out[4]).toMatchObject({ decision: "allow", reasons: [] })
    expect(out[5]).toMatchObject({ decision: "allow", reasons: [] })
  })

  it("a PostToolUse block marks the result an error and appends the reason to what the model sees", async () => {
    const r = await sharedRun()
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[6]).toEqual({
      event: "tool_result",
      content: `${content}\n\nthe output holds an AWS access key; do not repeat it`,
      is_error: true
    })
    expect(out[7]).toEqual({ event: "tool_result", content: "a b", is_error: false })
  })

  it("updatedInput rewrites settle like any rewrite, with another extension's rewrite in the same call", async () => {
    const cfg = writeConfig({
      extensions: [
        adapter("timeout-wrap", ["--format", "claude", "--matcher", "Bash"], ["python3", fixture("timeout_wrap.py")], {
          events: ["tool_call"]
        }),
        // Lower name: its proposal is adopted first; the hook then sees and wraps the rewritten command.
        {
          name: "a-rewriter",
          command: process.execPath,
          args: [`${repoRoot}test/fixtures/host-rewriter.mjs`],
          events: ["tool_call"],
          env: { FROM: "npm t", TO: "npm test" }
        }
      ]
    })
    const r = await runCli(["run", "--config", cfg], { input: lines(call("npm t"), call("make")) })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[0]).toMatchObject({ decision: "allow", args: { command: "timeout 600 npm test" }, rounds: 3 })
    expect(out[1]).toMatchObject({ decision: "allow", args: { command: "make" }, rounds: 1 })
  })

  it("an adapter the host gives up on (its timeout_ms) takes its running hook and the hook's helpers down with it", async () => {
    const marker = `abhed-sleeper-host-${process.pid}-${Date.now()}`
    const cfg = writeConfig({
      extensions: [
        adapter(
          "slow-hook",
          ["--format", "claude", "--timeout-ms", "120000"],
          ["bash", fixture("sleeper.sh"), marker],
          {
            // `list_tools` is the first exchange (the adapter answers it without running the hook): the adapter's
            // start is spent in startup_timeout_ms, and the call is under timeout_ms alone, long enough for the
            // adapter to spawn the hook on a loaded machine, then the host gives up on it.
            events: ["list_tools", "tool_call"],
            timeout_ms: 1500,
            startup_timeout_ms: 40_000
          }
        )
      ]
    })
    const r = await runCli(["run", "--config", cfg], { input: lines(call("ls"), call("pwd")) })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out.map((o) => o["decision"])).toEqual(["allow", "allow"])
    // Given up on at the call, by its timeout_ms, not at its start.
    expect(r.stderr).toContain("extension slow-hook is dead: timed_out (1500 ms)")
    expect(processesWith(marker)).toEqual([])
  })

  it("a hook that sleeps past --timeout-ms is killed with its helpers; the run goes on; --fail-closed blocks", async () => {
    const marker = `abhed-sleeper-${process.pid}-${Date.now()}`
    const cfg = writeConfig({
      extensions: [
        adapter(
          "sleepy",
          ["--format", "claude", "--timeout-ms", "300"],
          ["bash", fixture("sleeper.sh"), `${marker}-open`],
          {
            events: ["tool_call"]
          }
        ),
        adapter(
          "sleepy-closed",
          ["--format", "claude", "--timeout-ms", "300", "--fail-closed", "--matcher", "Write"],
          ["bash", fixture("sleeper.sh"), `${marker}-closed`],
          { events: ["tool_call"] }
        )
      ]
    })
    const session = liveRun(cfg)
    expect(await session.send(call("ls"))).toMatchObject({ decision: "allow", reasons: [] })
    // Mid-session: the hook and the helper it started were killed when the run overran, not at the session's end.
    expect(await survivorsOf(marker)).toEqual([])
    expect(await session.send(call("pwd"))).toMatchObject({ decision: "allow", reasons: [] })
    const closed = await session.send(
      JSON.stringify({ event: "tool_call", tool: "write", args: { path: "a", content: "" } })
    )
    expect(closed).toMatchObject({ decision: "deny" })
    expect(JSON.stringify(closed["reasons"])).toContain("did not finish within 300 ms")
    expect(await survivorsOf(marker)).toEqual([])
    expect(await session.end()).toBe(0)
    expect(processesWith(marker)).toEqual([])
  })
})

describe("what a hook run says on stderr (the host shows it at --log-level debug)", () => {
  it("one line per request: matched or not, how the run ended, how long it took, what it became; an allow lifts nothing", async () => {
    const cfg = writeConfig({
      extensions: [
        adapter(
          "git-guard",
          ["--format", "claude", "--matcher", "Bash"],
          ["python3", fixture("project/.claude/hooks/git_guard.py")],
          {
            events: ["tool_call"]
          }
        )
      ]
    })
    const r = await runCli(["run", "--config", cfg, "--log-level", "debug"], {
      input: lines(
        call("git status"),
        call("rm -rf /etc"),
        JSON.stringify({ event: "tool_call", tool: "read", args: { path: "a" } })
      )
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/tool_call Bash: ran: exit 0 in \d+ ms; no opinion/)
    expect(r.stderr).toMatch(/tool_call Bash: ran: exit 0 in \d+ ms; block/)
    expect(r.stderr).toContain("tool_call Read: not matched by --matcher; not run; {}")
    expect(r.stderr).toContain('the hook answered permissionDecision "allow" (git is safe): it lifts nothing here')
    // Never the call's args.
    expect(r.stderr).not.toContain("rm -rf /etc")
  })
})

describe("a hook that fails or overflows", () => {
  it("a failed run is answered failed, saying why (exit code, first line of stderr); --fail-closed blocks", async () => {
    const request = call("ls", { id: "r1", session_id: "s", call_id: "c-1" })
    const [open, closed] = await Promise.all(
      [[], ["--fail-closed"]].map((flags) =>
        runCli(["hook", "--format", "claude", ...flags, "--", "bash", fixture("broken.sh")], { input: lines(request) })
      )
    )
    expect(open?.code, open?.stderr).toBe(0)
    expect(jsonLines(open?.stdout ?? "")).toEqual([
      { id: "r1", failed: "hook failed: exit 1: broken hook: cannot reach the policy server" }
    ])
    expect(open?.stderr).toMatch(/tool_call Bash: ran: exit 1 in \d+ ms; failed/)
    expect(jsonLines(closed?.stdout ?? "")).toEqual([
      {
        id: "r1",
        block: true,
        reason: "hook failed: exit 1: broken hook: cannot reach the policy server (--fail-closed)"
      }
    ])
  })

  it("through run: the extension's on_failure decides a failed run (deny blocks the call and withholds the result; the default passes them), audited as failed, with a warning", async () => {
    const result = JSON.stringify({ event: "tool_result", tool: "bash", content: "out", is_error: false })
    const session = async (onFailure: Line) => {
      const cfg = writeConfig({
        extensions: [adapter("broken", ["--format", "claude"], ["bash", fixture("broken.sh")], onFailure)]
      })
      const audit = join(dirname(cfg), "audit.jsonl")
      const r = await runCli(["run", "--config", cfg, "--audit", audit], { input: lines(call("ls"), result) })
      expect(r.code, r.stderr).toBe(0)
      const records = readFileSync(audit, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { event: string; rounds: Array<{ exchanges: Array<Line> }> })
        .filter((x) => x.event === "tool_call" || x.event === "tool_result")
      return { r, out: jsonLines(r.stdout) as Array<Line>, records }
    }
    const [denied, passed] = await Promise.all([session({ on_failure: "deny" }), session({})])
    const why = "extension broken could not answer: hook failed: exit 1: broken hook: cannot reach the policy server"
    expect(denied.out[0]).toMatchObject({
      event: "tool_call",
      decision: "deny",
      reasons: [{ extension: "broken", reason: why }]
    })
    expect(denied.out[1]).toMatchObject({ event: "tool_result", is_error: true })
    expect(denied.out[1]?.["content"]).not.toBe("out")
    expect(passed.out[0]).toMatchObject({ event: "tool_call", decision: "allow" })
    expect(passed.out[1]).toMatchObject({ event: "tool_result", content: "out", is_error: false })
    for (const { r, records } of [denied, passed]) {
      expect(records.map((x) => x.rounds[0]?.exchanges[0]?.["status"])).toEqual(["failed", "failed"])
      // The extension lives on (each request is answered by the same adapter), and the host warns each time.
      expect(r.stderr).toContain(
        "extension broken could not answer a tool_call request: hook failed: exit 1: broken hook: cannot reach the policy server"
      )
      expect(r.stderr).toContain("extension broken could not answer a tool_result request")
      expect(r.stderr).not.toContain("is dead")
    }
  })

  it("abhed-ext check fails an adapter whose hook fails: its requests are answered failed", async () => {
    const r = await runCli([
      "check",
      "--",
      process.execPath,
      bin,
      "hook",
      "--format=claude",
      "--",
      "bash",
      fixture("broken.sh")
    ])
    expect(r.code, r.stdout).toBe(1)
    expect(r.stdout).toMatch(/FAIL +valid_replies/)
    expect(r.stdout).toContain(
      'tool_call: could not answer (its reply says "failed": "hook failed: exit 1: broken hook: cannot reach the policy server")'
    )
  })

  it("a request it cannot read stops the adapter without a reply or a run (a guard must not pass it), exit 1", async () => {
    const valid = call("ls", { id: "r1", session_id: "s", call_id: "c-1" })
    const unreadable = call("rm -rf /", { id: "r2" }) // no session_id, no call_id: not a request the host writes
    const r = await runCli(["hook", "--format", "claude", "--", "bash", fixture("broken.sh")], {
      input: lines(valid, unreadable, valid)
    })
    expect(r.code, r.stderr).toBe(1)
    expect(jsonLines(r.stdout)).toEqual([{ id: "r1", failed: expect.stringContaining("hook failed: exit 1") }])
    expect(r.stderr.match(/: ran: /g)).toHaveLength(1)
    // The host shows the last stderr line as the cause of the adapter's death, then applies its on_failure.
    expect(r.stderr.trimEnd().split("\n").at(-1)).toMatch(
      /^abhed-ext hook: cannot read a request: tool_call: request does not match the protocol: .*on_failure$/
    )
  })

  it("--timeout-ms past 2^31-1 ms is waited out, not fired at once: the hook's block lands", async () => {
    const cfg = writeConfig({
      extensions: [
        adapter("slow-deny", ["--format", "claude", "--timeout-ms", "3000000000"], ["bash", fixture("slow_deny.sh")], {
          events: ["tool_call"],
          timeout_ms: 30_000,
          startup_timeout_ms: 40_000
        })
      ]
    })
    const r = await runCli(["run", "--config", cfg], { input: lines(call("ls")) })
    expect(r.code, r.stderr).toBe(0)
    expect(jsonLines(r.stdout)[0]).toMatchObject({
      decision: "deny",
      reasons: [{ extension: "slow-deny", reason: "slow, but no" }]
    })
  })

  it("a deny cut at the stdout cap blocks with --fail-closed", async () => {
    const cfg = writeConfig({
      extensions: [
        adapter("flood", ["--format", "claude", "--fail-closed"], ["bash", fixture("flood.sh")], {
          events: ["tool_call"]
        })
      ]
    })
    const r = await runCli(["run", "--config", cfg], { input: lines(call("ls")) })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[0]).toMatchObject({ decision: "deny" })
    expect(JSON.stringify(out[0]?.["reasons"])).toContain("its stdout passed the 16 MiB limit and was cut")
  }, 60_000)
})

describe("killTree", () => {
  it("ends a process and every process it started, wherever its group is", async () => {
    const marker = `abhed-tree-${process.pid}-${Date.now()}`
    const child = spawn("bash", [fixture("sleeper.sh"), marker], { stdio: ["pipe", "ignore", "ignore"] })
    child.stdin.end("{}")
    const exited = new Promise((resolve) => child.on("exit", resolve))
    // Both the hook and its helper are up (the helper execs after its fork: poll, bounded).
    for (let i = 0; i < 200 && processesWith(marker, true).length < 2; i++) await new Promise((r) => setTimeout(r, 25))
    expect(processesWith(marker, true)).toHaveLength(2)
    killTree(child.pid ?? -1)
    await exited
    expect(await survivorsOf(marker)).toEqual([])
  })
})

describe("a hook that leaves a helper holding its pipes", () => {
  it("is answered as soon as it exits, and the helper is gone before the reply is out", async () => {
    const marker = `abhed-lingering-${process.pid}-${Date.now()}`
    const cfg = writeConfig({
      extensions: [
        adapter("lingering", ["--format", "gemini"], ["bash", fixture("lingering.sh"), marker], {
          events: ["tool_call"]
        })
      ]
    })
    const session = liveRun(cfg)
    // The helper sleeps 300 s holding the hook's stdout: the answer was read when the hook exited, not at a timeout.
    expect(await session.send(call("ls"))).toMatchObject({
      decision: "deny",
      reasons: [{ reason: "lingering hook says no" }]
    })
    // Still mid-session (stdin open): the helper was ended by the run itself, not by the session's end.
    expect(await survivorsOf(marker)).toEqual([])
    expect(await session.end()).toBe(0)
  })
})

describe("a hook whose helper runs in a session of its own and holds its pipes", () => {
  it("setsid, start_new_session and a double-forked daemon: each exit 2 blocks within the bound; no helper is left", async () => {
    const marker = `abhed-session-${process.pid}-${Date.now()}`
    const cfg = writeConfig({
      extensions: [
        adapter("setsid-hook", ["--format", "claude"], ["bash", fixture("setsid_helper.sh"), `${marker}-setsid`], {
          events: ["tool_call"]
        }),
        adapter("session-hook", ["--format", "claude"], ["python3", fixture("new_session.py"), `${marker}-python`], {
          events: ["tool_call"]
        }),
        adapter("daemon-hook", ["--format", "claude"], ["bash", fixture("daemon.sh"), `${marker}-daemon`], {
          events: ["tool_call"]
        })
      ]
    })
    const session = liveRun(cfg)
    // Each hook's own reason: its exit was read, not waited out to --timeout-ms (20 s) or the host's 30 s.
    const reply = await session.send(call("rm -rf /srv"))
    expect(reply).toMatchObject({ decision: "deny" })
    expect(reply["reasons"]).toEqual([
      { extension: "daemon-hook", reason: "blocked by the daemon hook" },
      { extension: "session-hook", reason: "blocked by the new-session hook" },
      { extension: "setsid-hook", reason: "blocked by the setsid hook" }
    ])
    // Mid-session: the helpers were found through the pipes they held and killed by the run itself.
    expect(await survivorsOf(marker)).toEqual([])
    expect(await session.send(call("rm -rf /var"))).toMatchObject({ decision: "deny" })
    expect(await session.end()).toBe(0)
    expect(await survivorsOf(marker)).toEqual([])
  })

  it("a hook that never answers while a daemon holds its pipes is timed out at --timeout-ms; --fail-closed blocks", async () => {
    const marker = `abhed-daemon-hang-${process.pid}-${Date.now()}`
    const cfg = writeConfig({
      extensions: [
        adapter(
          "hanging",
          ["--format", "claude", "--timeout-ms", "2000", "--fail-closed"],
          ["bash", fixture("daemon.sh"), marker, "hang"],
          {
            events: ["tool_call"],
            timeout_ms: 30_000,
            startup_timeout_ms: 40_000
          }
        )
      ]
    })
    const session = liveRun(cfg)
    const reply = await session.send(call("rm -rf /srv"))
    expect(reply).toMatchObject({ decision: "deny", reasons: [{ extension: "hanging" }] })
    expect(JSON.stringify(reply["reasons"])).toContain("did not finish within 2000 ms")
    expect(await survivorsOf(marker)).toEqual([])
    expect(await session.end()).toBe(0)
    expect(await survivorsOf(marker)).toEqual([])
  })
})

describe("Gemini CLI hooks through abhed-ext hook", () => {
  it("BeforeTool decision deny blocks with the reason; decision allow is no opinion", async () => {
    const cfg = writeConfig({
      extensions: [
        adapter(
          "gemini-guard",
          ["--format", "gemini", "--matcher", "run_shell_command"],
          ["bash", fixture("gemini_guard.sh")],
          {
            events: ["tool_call"]
          }
        )
      ],
      policy: { default: "ask" }
    })
    const r = await runCli(["run", "--config", cfg], { input: lines(call("rm -r build"), call("ls")) })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[0]).toMatchObject({
      decision: "deny",
      reasons: [{ extension: "gemini-guard", reason: "no rm from the agent" }]
    })
    expect(out[1]).toMatchObject({ decision: "ask", reasons: [{ extension: "policy" }] })
  })
})

describe("MCP tools through abhed-ext hook: their names pass unchanged", () => {
  // The hook denies every call it sees, naming the tool and the input it was shown.
  const seen = [
    "python3",
    "-c",
    "import json,sys; d=json.load(sys.stdin); print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', " +
      "'permissionDecision': 'deny', 'permissionDecisionReason': 'saw ' + d['tool_name'] + ' ' + json.dumps(d['tool_input'], sort_keys=True)}}))"
  ]

  it("a Claude hook with matcher mcp__.* sees mcp__fs__write_file and its args as they are; other tools pass it by", async () => {
    const cfg = writeConfig({
      extensions: [
        adapter("mcp-guard", ["--format", "claude", "--matcher", "mcp__.*"], seen, { events: ["tool_call"] }),
        adapter("exact-guard", ["--format", "claude", "--matcher", "mcp__github__create_issue"], seen, {
          events: ["tool_call"]
        })
      ]
    })
    const write = { event: "tool_call", tool: "mcp__fs__write_file", args: { path: "/srv/x.txt", content: "hi" } }
    const issue = { event: "tool_call", tool: "mcp__github__create_issue", args: { title: "t" } }
    const r = await runCli(["run", "--config", cfg], {
      input: lines(JSON.stringify(write), JSON.stringify(issue), call("ls"))
    })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[0]).toMatchObject({
      decision: "deny",
      reasons: [{ extension: "mcp-guard", reason: 'saw mcp__fs__write_file {"content": "hi", "path": "/srv/x.txt"}' }]
    })
    expect(out[1]?.["reasons"]).toEqual([
      { extension: "exact-guard", reason: 'saw mcp__github__create_issue {"title": "t"}' },
      { extension: "mcp-guard", reason: 'saw mcp__github__create_issue {"title": "t"}' }
    ])
    expect(out[2]).toMatchObject({ decision: "allow", reasons: [] })
  })
})

describe("abhed-ext hook usage errors: the problem and a hint on stderr, exit 64", () => {
  for (const [flags, problem] of [
    [["--matcher", "(["], 'abhed-ext hook: --matcher: matcher "([" is not a valid regular expression'],
    [["--tool-names", "bash"], 'abhed-ext hook: --tool-names: "bash" is not ours=peer (e.g. bash=Bash)']
  ] as const) {
    it(flags.join(" "), async () => {
      const r = await runCli(["hook", "--format", "claude", ...flags, "--", "true"], { input: "" })
      expect(r.code).toBe(64)
      expect(r.stdout).toBe("")
      const stderr = r.stderr.trim().split("\n")
      expect(stderr).toHaveLength(2)
      expect(stderr[0]).toContain(problem)
      expect(stderr[1]).toContain("`abhed-ext hook --help` for more")
    })
  }
})

/**
 * `import-hooks --this-cli -o DIR/abhed.json SETTINGS` (this Node and this CLI: abhed-ext is not on PATH here), into
 * a fresh folder, so that the relative `cwd` it writes is checked by running the config from where it was written.
 */
const patientArgs = (args: Array<string>): Array<string> => {
  const end = args.indexOf("--")
  const given = args.slice(0, end).find((a) => a.startsWith("--timeout-ms="))
  const ms = Math.max(Number(given?.slice("--timeout-ms=".length) ?? 0), 20_000)
  return [...args.slice(0, end).filter((a) => a !== given), `--timeout-ms=${ms}`, ...args.slice(end)]
}

const importTo = async (settings: string, flags: ReadonlyArray<string> = []) => {
  const file = join(mkdtempSync(join(tmpdir(), "abhed-import-")), "abhed.json")
  const imported = await runCli(["import-hooks", "--this-cli", "-o", file, ...flags, settings])
  const text = imported.code === 0 ? readFileSync(file, "utf8") : ""
  const config = (text === "" ? { extensions: [] } : JSON.parse(text)) as { extensions: Array<Line> }
  // Run with patient extension bounds (a loaded machine starts Node slowly); the file as written is `text`.
  const patient = {
    ...config,
    extensions: config.extensions.map((e) => ({
      ...e,
      // The hook's own bound is patient too (python3 under load; the 4 s default is not what these tests are about).
      args: patientArgs(e["args"] as Array<string>),
      timeout_ms: Math.max(Number(e["timeout_ms"] ?? 0), 30_000),
      startup_timeout_ms: Math.max(Number(e["startup_timeout_ms"] ?? 0), 40_000)
    }))
  }
  if (text !== "") writeFileSync(file, JSON.stringify(patient, null, 2))
  return { ...imported, file, text, config }
}

/**
 * The project's settings (three hooks) imported once: four tests read the same import (each its own part of it), and
 * two of them run the written config (once, below), which nothing changes.
 */
let projectImport: ReturnType<typeof importTo> | undefined
const importProject = () => (projectImport ??= importTo("test/fixtures/hooks/project/.claude/settings.json"))

/**
 * The written config run once over the calls two tests ask about, each decided on its own: lines 0-3 the three
 * hooks' (rm -rf, an edit of .env.local, git log, the peer's tool name Bash), line 4 a read with a decoy file_path.
 */
let projectRun: Promise<CliResult> | undefined
const runProject = () =>
  (projectRun ??= importProject().then((imported) =>
    runCli(["run", "--config", imported.file], {
      input: lines(
        call("rm -rf /var"),
        JSON.stringify({
          event: "tool_call",
          tool: "edit",
          args: { path: ".env.local", old_string: "a", new_string: "b" }
        }),
        call("git log"),
        // An agent using the peers' names: its tool Bash reaches the hook its matcher names.
        JSON.stringify({ event: "tool_call", tool: "Bash", args: { command: "rm -rf /srv" } }),
        JSON.stringify({ tool: "read", event: "tool_call", args: { path: "config/.env", file_path: "README.md" } })
      )
    })
  ))

describe("abhed-ext import-hooks", () => {
  it("shows a settings file's own text escaped: a hostile type or command cannot drive the terminal", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-hostile-settings-"))
    const settings = join(dir, "settings.json")
    writeFileSync(
      settings,
      JSON.stringify({
        hooks: {
          PreToolUse: [
            {
              matcher: "Bash",
              hooks: [
                { type: "bogus\u001b[31m", command: "echo \u001b]52;c;cm0gLXJmIH4K\u0007" },
                { type: "command", command: "exit 0" }
              ]
            }
          ]
        }
      })
    )
    const r = await runCli(["import-hooks", "--format", "claude", "-o", join(dir, "abhed.json"), settings])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("not carried over")
    expect(r.stderr).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/)
    expect(r.stderr).toContain("bogus\\x1b[31m")
  }, 60_000)

  it("-o into a folder that does not exist: one line naming the folder, exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-import-o-"))
    const settings = join(dir, "settings.json")
    writeFileSync(settings, JSON.stringify({ hooks: {} }))
    const out = join(dir, "no-such-folder", "abhed.json")
    const r = await runCli(["import-hooks", "--format", "claude", "-o", out, settings])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`cannot write ${out}: its folder ${join(dir, "no-such-folder")} does not exist`)
  })

  it("turns a settings file with three hooks into a config run accepts, and names the one it cannot carry over", async () => {
    const imported = await importProject()
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.stderr).toContain("hooks.UserPromptSubmit[0].hooks[0]")
    expect(imported.stderr).toContain("UserPromptSubmit has no counterpart here")
    expect(imported.stderr).not.toContain("PreToolUse[0].hooks[0]")
    const config = imported.config
    expect(config.extensions.map((e) => e["events"])).toEqual([["tool_call"], ["tool_call"]])
    expect(config.extensions.map((e) => e["reply_ids"])).toEqual(["required", "required"])
    // Exact-name matchers become match rules in our tool names and as written (a tool called Read); the matcher is
    // carried over too.
    expect(config.extensions[1]?.["match"]).toEqual([
      { tool: "read" },
      { tool: "Read" },
      { tool: "edit" },
      { tool: "Edit" },
      { tool: "write" },
      { tool: "Write" }
    ])
    expect(config.extensions[1]?.["args"]).toContain("--matcher=Read|Edit|Write")
    // Claude's timeout is in seconds.
    expect(config.extensions[0]?.["args"]).toContain("--timeout-ms=10000")
    const r = await runProject()
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[0]).toMatchObject({
      decision: "deny",
      reasons: [{ reason: "rm -rf on an absolute path is not allowed" }]
    })
    expect(out[1]).toMatchObject({ decision: "deny", reasons: [{ reason: "Blocked: .env.local may hold secrets" }] })
    expect(out[2]).toMatchObject({ decision: "allow", reasons: [] })
    expect(out[3]).toMatchObject({
      decision: "deny",
      reasons: [{ reason: "rm -rf on an absolute path is not allowed" }]
    })
  }, 120_000)

  it("writes a config to commit: abhed-ext from PATH, cwd relative to the config's folder, $schema, a final newline", async () => {
    const cwd = `${repoRoot}test/fixtures/hooks/project`
    const onStdout = await runCli(["import-hooks", ".claude/settings.json"], { cwd })
    expect(onStdout.code, onStdout.stderr).toBe(0)
    expect(onStdout.stdout.endsWith("}\n")).toBe(true)
    const config = JSON.parse(onStdout.stdout) as { $schema: string; extensions: Array<Line> }
    expect(config.$schema).toMatch(/^https:\/\/.*\/abhed\.schema\.json$/)
    expect(config.extensions.map((e) => [e["command"], e["cwd"], (e["args"] as Array<string>)[0]])).toEqual([
      ["abhed-ext", ".", "hook"],
      ["abhed-ext", ".", "hook"]
    ])
    expect(onStdout.stdout).not.toContain(repoRoot)
    const explicit = await runCli(
      ["import-hooks", "--adapter-command", "./node_modules/.bin/abhed-ext", ".claude/settings.json"],
      { cwd }
    )
    expect((JSON.parse(explicit.stdout) as { extensions: Array<Line> }).extensions[0]?.["command"]).toBe(
      "./node_modules/.bin/abhed-ext"
    )
    const written = await importProject()
    expect(written.text.endsWith("}\n")).toBe(true)
    expect(written.config.extensions[0]?.["cwd"]).not.toMatch(/^\//)
  })

  it("says on stderr what it changed: the default bound, the environment, no --fail-closed", async () => {
    const imported = await importProject()
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.stderr).toContain(
      "hooks.PreToolUse[1].hooks[0] set no timeout: each run is bounded by the adapter's 4000 ms"
    )
    expect(imported.stderr).toContain("environment: hooks run with the extension's environment, not your shell's")
    expect(imported.stderr).toContain("failures: without --fail-closed")
    expect(imported.stderr).toContain(
      'is left to the extension\'s on_failure: no opinion by default, as in the peers; set its on_failure to "deny"'
    )
  })

  it("a matcher that starts with '-' is passed as --matcher=…: the adapter starts and the hook blocks", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-hooks-"))
    mkdirSync(join(dir, ".claude"))
    const settings = join(dir, ".claude", "settings.json")
    writeFileSync(
      settings,
      JSON.stringify({
        hooks: {
          PreToolUse: [
            {
              matcher: "-?Bash",
              hooks: [{ type: "command", command: "cat >/dev/null; echo no >&2; exit 2", timeout: 20 }]
            }
          ]
        }
      })
    )
    const imported = await importTo(settings)
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.config.extensions[0]?.["args"]).toContain("--matcher=-?Bash")
    const r = await runCli(["run", "--config", imported.file], { input: lines(call("rm -rf /srv")) })
    expect(r.code, r.stderr).toBe(0)
    expect(jsonLines(r.stdout)[0], r.stderr).toMatchObject({ decision: "deny", reasons: [{ reason: "no" }] })
  })

  it("carries a Gemini CLI settings file over too (told by its event names)", async () => {
    const imported = await importTo("test/fixtures/hooks/gemini-project/.gemini/settings.json")
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.stderr).toContain(
      "hooks.BeforeModel[0].hooks[0] (./model-audit.sh): not carried over: BeforeModel has no counterpart here"
    )
    const config = imported.config
    expect(config.extensions).toHaveLength(1)
    expect(config.extensions[0]).toMatchObject({ events: ["tool_call"] })
    expect(resolve(dirname(imported.file), String(config.extensions[0]?.["cwd"]))).toBe(
      `${repoRoot}test/fixtures/hooks/gemini-project`
    )
    // A Gemini matcher is a regular expression: it stays with the adapter, no match rules.
    expect(config.extensions[0]?.["match"]).toBeUndefined()
    expect(config.extensions[0]?.["args"]).toEqual(
      expect.arrayContaining(["--format=gemini", "--matcher=run_shell_command", "--timeout-ms=20000"])
    )
    const r = await runCli(["run", "--config", imported.file], { input: lines(call("rm -r dist"), call("ls")) })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[0]).toMatchObject({ decision: "deny", reasons: [{ reason: "no rm from the agent" }] })
    expect(out[1]).toMatchObject({ decision: "allow", reasons: [] })
  })

  it("a decoy file_path beside the call's path does not pass a file guard: the hook judges the path that runs", async () => {
    const imported = await importProject()
    expect(imported.code, imported.stderr).toBe(0)
    const r = await runProject()
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[4], r.stderr).toMatchObject({
      decision: "deny",
      reasons: [{ reason: "Blocked: config/.env may hold secrets" }]
    })
  })

  it("clamps a Claude timeout past what a timer can wait, says so, and the hook's block still lands", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-hooks-"))
    mkdirSync(join(dir, ".claude"))
    const settings = join(dir, ".claude", "settings.json")
    writeFileSync(
      settings,
      JSON.stringify({
        hooks: {
          PreToolUse: [
            {
              matcher: "Bash",
              hooks: [{ type: "command", command: `bash ${fixture("slow_deny.sh")}`, timeout: 3_000_000 }]
            }
          ]
        }
      })
    )
    const imported = await importTo(settings)
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.stderr).toContain("hooks.PreToolUse[0].hooks[0]")
    expect(imported.stderr).toContain("clamped to 2147478647 ms")
    expect(imported.config.extensions[0]?.["args"]).toContain("--timeout-ms=2147478647")
    const r = await runCli(["run", "--config", imported.file], { input: lines(call("ls")) })
    expect(r.code, r.stderr).toBe(0)
    expect(jsonLines(r.stdout)[0]).toMatchObject({ decision: "deny", reasons: [{ reason: "slow, but no" }] })
  })

  it("reads a Gemini settings file with comments; trims its matcher; names the env and the matcher it drops", async () => {
    const imported = await importTo("test/fixtures/hooks/gemini-commented/.gemini/settings.json")
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.stderr).toContain(
      "hooks.BeforeTool[0].hooks[0] (bash ../gemini_guard.sh): carried over, but its env (GUARD_MODE) is not"
    )
    expect(imported.stderr).toContain(
      'hooks.SessionStart[0].hooks[0] (true): carried over, but its matcher "resume" is not'
    )
    const r = await runCli(["run", "--config", imported.file], { input: lines(call("rm -r dist"), call("ls")) })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[0]).toMatchObject({ decision: "deny", reasons: [{ reason: "no rm from the agent" }] })
    expect(out[1]).toMatchObject({ decision: "allow", reasons: [] })
  })

  it("a file that is not JSON is one line on stderr and exit 1", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "abhed-hooks-")), "settings.json")
    writeFileSync(file, "{ nope")
    const r = await runCli(["import-hooks", file])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain(`cannot read ${file}: not JSON`)
  })
})
