import { Effect, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { makeAdapter } from "../../src/hook/HookAdapter.ts"
import { peerInput, toolPart } from "../../src/hook/HookInput.ts"
import { all, matches, parseMatcher } from "../../src/hook/HookMatcher.ts"
import { appendOnce, mapRun, ReasonMaxChars } from "../../src/hook/HookOutcome.ts"
import { FailedTextMax as FailedWhyMaxChars } from "@abhed/protocol/ReplyCheck"
import type { HookRun } from "../../src/hook/HookRunner.ts"
import { decodeConfig, Request } from "@abhed/protocol"
import { toConfig } from "../../src/hook/HookConfig.ts"
import { detectFormat, parseSettings, readSettings } from "../../src/hook/HookSettings.ts"
import { MaxHookTimeoutMs } from "../../src/hook/HookTimeout.ts"
import {
  argsFromPeer,
  argsToPeer,
  ourToolName,
  parseToolNames,
  peerToolName,
  toolNames
} from "../../src/hook/HookToolNames.ts"
import type { HookFormat } from "../../src/hook/HookFormat.ts"

const claude = toolNames("claude")
const exited = (code: number, stdout = "", stderr = ""): HookRun => ({ _tag: "Exited", code, stdout, stderr })
const json = (u: unknown) => exited(0, JSON.stringify(u))
const pre = (decision: string, extra: Record<string, unknown> = {}) =>
  json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: decision, ...extra } })

const callRequest = (command: string, extra: Record<string, unknown> = {}) => ({
  event: "tool_call",
  session_id: "s",
  call_id: "c-1",
  tool: "bash",
  args: { command, description: "d" },
  ...extra
})
const resultRequest = (content: string) => ({
  event: "tool_result",
  session_id: "s",
  call_id: "c-1",
  tool: "bash",
  args: { command: "cat x" },
  content,
  is_error: false
})

/** A request as the SDK hands it to the adapter: checked against the protocol, typed. */
const typed = Schema.decodeUnknownSync(Request)

const map = (request: Record<string, unknown>, run: HookRun, format: HookFormat = "claude", failClosed = false) =>
  mapRun(String(request["event"]), toolPart(typed(request), toolNames(format)), run, {
    format,
    failClosed,
    label: "hook"
  })

describe("a hook's reason", () => {
  it("is cut to ReasonMaxChars: a deny with a reason of 6 M three-byte characters (18 MB) stays a deny the host takes", () => {
    const reason = "界".repeat(6_000_000)
    const { reply } = map(callRequest("cat big"), pre("deny", { permissionDecisionReason: reason }))
    expect(reply["block"]).toBe(true)
    const kept = String(reply["reason"])
    expect(kept.length).toBe(ReasonMaxChars)
    expect(kept.startsWith("界界界")).toBe(true)
    expect(kept.endsWith("…")).toBe(true)
    // Far below the host's 16 MiB a reply.
    expect(Buffer.byteLength(JSON.stringify(reply))).toBeLessThan(64 * 1024)
  })
})

describe("tool names", () => {
  it("map both ways with the defaults, pass unknown names through, and take overrides", () => {
    expect(peerToolName(claude, "bash")).toBe("Bash")
    expect(ourToolName(claude, "Bash")).toBe("bash")
    expect(peerToolName(claude, "weather")).toBe("weather")
    expect(peerToolName(toolNames("gemini"), "bash")).toBe("run_shell_command")
    const custom = toolNames("claude", { bash: "Shell" })
    expect(peerToolName(custom, "bash")).toBe("Shell")
    expect(ourToolName(custom, "Bash")).toBe("Bash")
    expect(ourToolName(custom, "Shell")).toBe("bash")
  })

  it("--tool-names names a bad entry", () => {
    expect(parseToolNames("bash=Bash, read=Read")).toEqual(Result.succeed({ bash: "Bash", read: "Read" }))
    expect(Result.isFailure(parseToolNames("bash"))).toBe(true)
    expect(parseToolNames("bash=")).toEqual(Result.fail(`--tool-names: "bash=" is not ours=peer (e.g. bash=Bash)`))
  })

  it("file tools see path as file_path, and a rewrite comes back as path", () => {
    expect(argsToPeer("Read", { path: "a" })).toEqual({ file_path: "a" })
    expect(argsToPeer("Bash", { path: "a" })).toEqual({ path: "a" })
    expect(argsFromPeer("Read", { file_path: "z" }, { path: "a" })).toEqual({ path: "z" })
    expect(argsFromPeer("Read", { file_path: "z" }, { file_path: "a" })).toEqual({ file_path: "z" })
  })

  it("a file_path the call carries beside its path is not what the hook sees: path, which runs, is", () => {
    expect(argsToPeer("Read", { path: "config/.env", file_path: "README.md" })).toEqual({ file_path: "config/.env" })
    expect(argsToPeer("write_file", { file_path: "x", path: "a", content: "c" })).toEqual({
      file_path: "a",
      content: "c"
    })
    // The hook's file_path is the path to run, whatever else the call or the rewrite carries.
    expect(argsFromPeer("Read", { file_path: "z" }, { path: "a", file_path: "decoy" })).toEqual({ path: "z" })
    expect(argsFromPeer("Edit", { file_path: "z", path: "y", old_string: "o" }, { path: "a" })).toEqual({
      path: "z",
      old_string: "o"
    })
    expect(argsFromPeer("Read", { path: "y" }, { path: "a" })).toEqual({ path: "y" })
    const decoy = {
      event: "tool_call",
      session_id: "s",
      call_id: "c",
      tool: "read",
      args: { path: "config/.env", file_path: "README.md" }
    }
    const context = { cwd: "/p", now: "t", names: claude }
    expect(peerInput("claude", typed(decoy), context)?.["tool_input"]).toEqual({ file_path: "config/.env" })
    // Gemini merges its tool_input over what the hook saw: the decoy is not brought back.
    const merged = map(decoy, json({ hookSpecificOutput: { tool_input: { limit: 5 } } }), "gemini").reply["args"]
    expect(merged).toEqual({ path: "config/.env", limit: 5 })
  })
})

describe("matchers, with each peer's rules", () => {
  const m = (format: HookFormat, source: string | undefined, tool: string) => {
    const parsed = parseMatcher(format, source)
    if (Result.isFailure(parsed)) throw new Error(parsed.failure)
    return matches(parsed.success, tool)
  }
  it("Claude: empty and * match all; plain names are exact; anything else is an unanchored regex", () => {
    expect(m("claude", undefined, "Bash")).toBe(true)
    expect(m("claude", "", "Bash")).toBe(true)
    expect(m("claude", "*", "Bash")).toBe(true)
    expect(m("claude", "Bash", "Bash")).toBe(true)
    expect(m("claude", "Bash", "BashOutput")).toBe(false)
    expect(m("claude", "Edit|Write", "Write")).toBe(true)
    expect(m("claude", "Edit|Write", "Read")).toBe(false)
    expect(m("claude", "mcp__.*", "mcp__github__list")).toBe(true)
    expect(m("claude", "^Notebook", "NotebookEdit")).toBe(true)
    expect(Result.isFailure(parseMatcher("claude", "(["))).toBe(true)
  })
  it("Gemini: a regex tested against the name; one that does not compile is an exact name", () => {
    expect(m("gemini", "read_.*", "read_file")).toBe(true)
    // Gemini CLI trims its matcher first.
    expect(m("gemini", "run_shell_command ", "run_shell_command")).toBe(true)
    expect(m("gemini", " \t", "read_file")).toBe(true)
    expect(m("gemini", " * ", "read_file")).toBe(true)
    expect(m("gemini", "run_shell_command", "run_shell_command")).toBe(true)
    expect(m("gemini", "run_shell_command", "read_file")).toBe(false)
    expect(m("gemini", "([", "([")).toBe(true)
  })
})

describe("peer input", () => {
  const context = { cwd: "/p", now: "2026-01-01T00:00:00.000Z", names: claude }
  it("Claude PreToolUse carries the documented fields", () => {
    expect(peerInput("claude", typed(callRequest("ls")), context)).toEqual({
      session_id: "s",
      cwd: "/p",
      permission_mode: "default",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls", description: "d" },
      tool_use_id: "c-1"
    })
  })
  it("Claude PostToolUse adds tool_response; Gemini AfterTool its own shape", () => {
    expect(peerInput("claude", typed(resultRequest("out")), context)?.["tool_response"]).toMatchObject({
      stdout: "out",
      content: "out"
    })
    expect(peerInput("gemini", typed(resultRequest("out")), { ...context, names: toolNames("gemini") })).toMatchObject({
      hook_event_name: "AfterTool",
      tool_name: "run_shell_command",
      timestamp: context.now,
      tool_response: { llmContent: "out", returnDisplay: "out" }
    })
  })
  it("events the peer has no hook for get no input (the reply is {})", () => {
    expect(peerInput("claude", typed({ event: "context", session_id: "s", messages: [] }), context)).toBeUndefined()
    // An event this build does not know never reaches the adapter (the SDK answers it {} unread); typed as one here.
    const brandNew = { event: "brand_new", session_id: "s" } as unknown as Request
    expect(peerInput("claude", brandNew, context)).toBeUndefined()
    expect(peerInput("claude", typed({ event: "session_start", session_id: "s" }), context)).toMatchObject({
      hook_event_name: "SessionStart"
    })
  })
})

describe("mapping a run back (veto only)", () => {
  it("deny blocks and ask asks, with the hook's reason", () => {
    expect(map(callRequest("x"), pre("deny", { permissionDecisionReason: "no" })).reply).toEqual({
      block: true,
      reason: "no"
    })
    expect(map(callRequest("x"), pre("ask", { permissionDecisionReason: "sure?" })).reply).toEqual({
      ask: true,
      reason: "sure?"
    })
  })

  it("allow, approve and defer are no opinion, and the reply says so", () => {
    for (const run of [
      pre("allow", { permissionDecisionReason: "fine" }),
      pre("defer"),
      json({ decision: "approve" })
    ]) {
      const { reply } = map(callRequest("x"), run)
      expect(reply["block"]).toBeUndefined()
      expect(reply["ask"]).toBeUndefined()
      expect(String(reply["reason"])).toContain("never permit; no opinion")
    }
  })

  it("exit 2 blocks with stderr; other exit codes are failed runs; empty and plain-text stdout are no opinion", () => {
    expect(map(callRequest("x"), exited(2, "", "nope\n")).reply).toEqual({ block: true, reason: "nope" })
    expect(map(callRequest("x"), exited(2)).reply).toEqual({ block: true, reason: "the hook exited with code 2" })
    const one = map(callRequest("x"), exited(1, "", "boom"))
    expect(one.reply).toEqual({ failed: "hook failed: exit 1: boom" })
    expect(one.log.join("\n")).toContain("boom")
    expect(map(callRequest("x"), exited(0, "checked\n")).reply).toEqual({})
    expect(map(callRequest("x"), exited(0)).reply).toEqual({})
  })

  it("legacy decision block and continue: false block", () => {
    expect(map(callRequest("x"), json({ decision: "block", reason: "old style" })).reply).toEqual({
      block: true,
      reason: "old style"
    })
    expect(map(callRequest("x"), json({ continue: false, stopReason: "halt" })).reply).toEqual({
      block: true,
      reason: "halt"
    })
  })

  it("updatedInput is an args rewrite (whole, Claude) or merged (Gemini tool_input), in our names; deny drops it", () => {
    expect(map(callRequest("x"), pre("allow", { updatedInput: { command: "y" } })).reply["args"]).toEqual({
      command: "y"
    })
    expect(map(callRequest("x"), pre("ask", { updatedInput: { command: "y" } })).reply).toMatchObject({
      ask: true,
      args: { command: "y" }
    })
    expect(map(callRequest("x"), pre("deny", { updatedInput: { command: "y" } })).reply["args"]).toBeUndefined()
    const read = { event: "tool_call", session_id: "s", call_id: "c", tool: "read", args: { path: "a", limit: 3 } }
    expect(map(read, pre("allow", { updatedInput: { file_path: "b" } })).reply["args"]).toEqual({ path: "b" })
    const gemini = map(callRequest("x"), json({ hookSpecificOutput: { tool_input: { command: "y" } } }), "gemini")
    expect(gemini.reply["args"]).toEqual({ command: "y", description: "d" })
  })

  it("PostToolUse block: is_error and the reason appended once, however many rounds see it", () => {
    const first = map(resultRequest("out"), json({ decision: "block", reason: "leak" })).reply
    expect(first).toEqual({ content: "out\n\nleak", is_error: true })
    const again = map(resultRequest("out\n\nleak"), json({ decision: "block", reason: "leak" })).reply
    expect(again).toEqual({ is_error: true })
    expect(map(resultRequest("out"), exited(2, "", "shown")).reply).toEqual({ content: "out\n\nshown", is_error: true })
    expect(appendOnce("", "x")).toBe("x")
    const context = json({
      hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "note: generated file" }
    })
    expect(map(resultRequest("out"), context).reply).toEqual({ content: "out\n\nnote: generated file" })
  })

  it("Gemini: decision deny blocks a call and hides a result behind the reason", () => {
    expect(map(callRequest("x"), json({ decision: "deny", reason: "r" }), "gemini").reply).toEqual({
      block: true,
      reason: "r"
    })
    expect(map(callRequest("x"), json({ decision: "block" }), "gemini").reply).toMatchObject({ block: true })
    expect(map(resultRequest("secret"), json({ decision: "deny", reason: "hidden" }), "gemini").reply).toEqual({
      content: "hidden",
      is_error: true
    })
    expect(map(resultRequest("a"), json({ hookSpecificOutput: { tool_output: "b" } }), "gemini").reply).toEqual({
      content: "b"
    })
  })

  it("a failed run is answered failed: exit code and the first line of stderr, bounded, never the call", () => {
    const secret = "rm -rf /secret-path"
    const py = map(
      callRequest(secret),
      exited(1, "", "Traceback (most recent call last):\n  File x\nImportError: yaml\n")
    )
    expect(py.reply).toEqual({ failed: "hook failed: exit 1: Traceback (most recent call last):" })
    // At most the 200 characters the host repeats, whole.
    const long = map(callRequest(secret), exited(3, "", `  ${"e".repeat(500)}  \nmore`)).reply
    expect(long["failed"]).toBe(`hook failed: exit 3: ${"e".repeat(178)}…`)
    expect(String(long["failed"])).toHaveLength(FailedWhyMaxChars)
    const far = map(callRequest(secret), { _tag: "SpawnFailed", detail: `spawn /${"d".repeat(900)} ENOENT` }).reply
    expect(String(far["failed"])).toHaveLength(FailedWhyMaxChars)
    expect(map(callRequest(secret), exited(1)).reply).toEqual({ failed: "hook failed: exit 1" })
    expect(map(callRequest(secret), { _tag: "TimedOut", timeoutMs: 300, stderr: "" }).reply).toEqual({
      failed: "hook failed: did not finish within 300 ms"
    })
    // With --fail-closed, a failed run blocks (exit 1 from a missing module is a guard that did not answer).
    expect(map(callRequest(secret), exited(1, "", "ImportError: yaml"), "claude", true).reply).toEqual({
      block: true,
      reason: "hook failed: exit 1: ImportError: yaml (--fail-closed)"
    })
    // A result's run that failed is answered failed too: its on_failure decides whether the content is shown.
    const after = map(resultRequest("out"), exited(1, "", "boom"))
    expect(after.reply).toEqual({ failed: "hook failed: exit 1: boom" })
    expect(after.log.join("\n")).toContain("boom")
    expect(map(resultRequest("out"), exited(1, "", "boom"), "claude", true).reply).toEqual({
      content: "out\n\nhook failed: exit 1: boom (--fail-closed)",
      is_error: true
    })
    // Any event: a session_start hook that fails is said so as well.
    expect(map({ event: "session_start", session_id: "s" }, exited(1)).reply).toEqual({ failed: "hook failed: exit 1" })
    for (const r of [py.reply, long, after.reply]) expect(JSON.stringify(r)).not.toContain(secret)
  })

  it("a stdout cut at the size limit is a failed run: a block with --fail-closed, else answered failed", () => {
    const cut: HookRun = {
      _tag: "Exited",
      code: 0,
      stdout: '{"decision":"block","reason":"xxxx',
      stderr: "",
      stdoutCut: true
    }
    expect(map(callRequest("x"), cut, "claude", true).reply).toEqual({
      block: true,
      reason: "hook failed: its stdout passed the 16 MiB limit and was cut (--fail-closed)"
    })
    expect(map(callRequest("x"), cut).reply).toEqual({
      failed: "hook failed: its stdout passed the 16 MiB limit and was cut"
    })
    // Exit 2 blocks whatever its stdout was.
    expect(map(callRequest("x"), { ...cut, code: 2, stderr: "no" }).reply).toEqual({ block: true, reason: "no" })
  })

  it("a run that does not finish is answered failed, or a block with --fail-closed", () => {
    const late: HookRun = { _tag: "TimedOut", timeoutMs: 300, stderr: "" }
    expect(map(callRequest("x"), late).reply).toEqual({ failed: "hook failed: did not finish within 300 ms" })
    expect(map(resultRequest("a"), late).reply).toEqual({ failed: "hook failed: did not finish within 300 ms" })
    expect(map(callRequest("x"), late, "claude", true).reply).toMatchObject({ block: true })
    expect(map(resultRequest("a"), late, "claude", true).reply).toMatchObject({ is_error: true })
    // The shell could not find the hook: it never ran, like a failed spawn.
    expect(map(callRequest("x"), exited(127, "", "bash: guard.sh: No such file")).reply).toEqual({
      failed: "hook failed: exit 127: bash: guard.sh: No such file"
    })
    expect(map(callRequest("x"), exited(127, "", "bash: guard.sh: No such file"), "claude", true).reply).toMatchObject({
      block: true
    })
    const gone: HookRun = { _tag: "SpawnFailed", detail: "ENOENT" }
    expect(map(callRequest("x"), gone).reply).toEqual({ failed: "hook failed: could not start: ENOENT" })
    expect(map(callRequest("x"), gone, "claude", true).reply).toMatchObject({ block: true })
  })
})

describe("an answer that failed in part", () => {
  it("keeps what it did say, with a note, instead of failed: a block, an ask or a rewrite is not dropped", () => {
    const unknown = { decision: "deny" } // Claude knows no decision "deny": the run failed
    const specific = (extra: Record<string, unknown>) =>
      json({ ...unknown, hookSpecificOutput: { hookEventName: "PreToolUse", ...extra } })
    const rewrite = map(callRequest("x"), specific({ updatedInput: { command: "y" } }))
    expect(rewrite.reply).toEqual({
      args: { command: "y" },
      reason:
        'hook failed: it answered decision "deny", which is not one of approve, block; the rest of its answer stands ' +
        "(use --fail-closed to block)"
    })
    const asks = map(callRequest("x"), specific({ permissionDecision: "ask", permissionDecisionReason: "sure?" })).reply
    expect(asks).toEqual({ ask: true, reason: "sure?" })
    const halts = map(callRequest("x"), json({ continue: false, stopReason: "halt", ...unknown })).reply
    expect(halts).toEqual({ block: true, reason: "halt" })
    // A redaction stands: failed would show the content whole under on_failure "ignore".
    const redacts = json({ decision: "Deny", hookSpecificOutput: { tool_output: "[redacted]" } })
    expect(map(resultRequest("secret"), redacts, "gemini").reply).toEqual({ content: "[redacted]" })
    // An allow beside it changes nothing: the run is answered failed.
    expect(map(callRequest("x"), json({ ...unknown, continue: true, reason: "ok" })).reply).toHaveProperty("failed")
  })
})

describe("the adapter loop", () => {
  const adapter = (matcher: string | undefined, runs: Array<string>, answer: HookRun) => {
    const parsed = parseMatcher("claude", matcher)
    if (Result.isFailure(parsed)) throw new Error(parsed.failure)
    return makeAdapter(
      {
        format: "claude",
        matcher: parsed.success,
        names: claude,
        failClosed: false,
        label: "hook",
        cwd: "/p",
        now: () => "t"
      },
      (input) => Effect.sync(() => (runs.push(input), answer))
    )
  }
  const say = (a: ReturnType<typeof adapter>, request: unknown) => Effect.runSync(a.answer(JSON.stringify(request)))

  it("echoes the request's id in every reply, including {}", () => {
    const runs: Array<string> = []
    const a = adapter("Bash", runs, pre("deny", { permissionDecisionReason: "no" }))
    expect(JSON.parse(say(a, callRequest("x", { id: "r-7" })).line)).toEqual({ id: "r-7", block: true, reason: "no" })
    expect(JSON.parse(say(a, { event: "context", session_id: "s", messages: [], id: 9 }).line)).toEqual({ id: 9 })
    expect(JSON.parse(say(a, callRequest("x")).line)).toEqual({ block: true, reason: "no" })
    // The hook reads one JSON line, newline-terminated (`read -r line` works as well as a JSON parser).
    expect(runs[0]).toMatch(/^\{[^\n]*\}\n$/)
  })

  it("a call the matcher does not match is answered {} without running the hook", () => {
    const runs: Array<string> = []
    const a = adapter("Bash", runs, pre("deny"))
    const answer = say(a, { event: "tool_call", session_id: "s", call_id: "c", tool: "read", args: { path: "x" } })
    expect(answer).toMatchObject({ line: "{}", ran: false })
    expect(runs).toEqual([])
  })

  it("a request it cannot read fails UnreadableRequest without running the hook: a guard must not pass it", () => {
    const runs: Array<string> = []
    const a = adapter(undefined, runs, pre("deny"))
    const unreadable = (line: string) => Effect.runSync(Effect.flip(a.answer(line)))
    // The host's requests carry session_id and call_id: one without them is a protocol mismatch, not a call to judge.
    const missing = unreadable(JSON.stringify({ event: "tool_call", tool: "bash", args: { command: "rm -rf /" } }))
    expect(missing).toMatchObject({ _tag: "UnreadableRequest" })
    expect(missing.reason).toContain("tool_call: request does not match the protocol")
    expect(unreadable("not json").reason).toContain("request is not JSON")
    expect(unreadable("[1]").reason).toContain("request is not a JSON object")
    expect(runs).toEqual([])
    // An event the peer has no hook for is answered {} unread, as the SDK answers an event without a handler.
    expect(say(a, { event: "context", messages: "unread", id: 3 })).toMatchObject({ line: '{"id":3}', ran: false })
  })

  it("its own rewrite coming back in a later round gets the same reply without a run", () => {
    const runs: Array<string> = []
    const a = adapter(undefined, runs, pre("allow", { updatedInput: { command: "wrapped" } }))
    const first = say(a, callRequest("x"))
    expect(JSON.parse(first.line)["args"]).toEqual({ command: "wrapped" })
    const second = say(a, { ...callRequest("x"), args: { command: "wrapped" }, round: 2 })
    expect(second).toMatchObject({ line: first.line, ran: false })
    expect(runs).toHaveLength(1)
    // Someone else's rewrite in round 2 is judged afresh.
    expect(say(a, { ...callRequest("x"), args: { command: "other" }, round: 2 }).ran).toBe(true)
  })

  it("another call of the same id is run: its rounds never get an earlier call's remembered reply", () => {
    // An agent may number its calls per turn: two calls, one id. The hook rewrites the first and has no opinion on
    // the second; the second's round 2 (another extension's rewrite) holds what the first was rewritten to.
    let answer: HookRun = pre("allow", { updatedInput: { command: "wrapped" } })
    const runs: Array<string> = []
    const a = makeAdapter(
      { format: "claude", matcher: all, names: claude, failClosed: false, label: "hook", cwd: "/p", now: () => "t" },
      (input) => Effect.sync(() => (runs.push(input), answer))
    )
    expect(JSON.parse(say(a, callRequest("x")).line)["args"]).toEqual({ command: "wrapped" })
    answer = pre("deny", { permissionDecisionReason: "not that" })
    // Another tool, the same id: judged by the hook.
    const other = say(a, { ...callRequest("x"), tool: "shell", args: { command: "wrapped" }, round: 2 })
    expect(other).toMatchObject({ ran: true })
    expect(JSON.parse(other.line)).toMatchObject({ block: true })
    // The same tool: a later call of that id, which the hook ran on and did not rewrite.
    answer = { _tag: "Exited", code: 0, stdout: "", stderr: "" }
    expect(say(a, callRequest("y")).ran).toBe(true)
    answer = pre("deny", { permissionDecisionReason: "not that" })
    const round2 = say(a, { ...callRequest("y"), args: { command: "wrapped" }, round: 2 })
    expect(round2).toMatchObject({ ran: true })
    expect(JSON.parse(round2.line)).toMatchObject({ block: true, reason: "not that" })
    expect(runs).toHaveLength(4)
  })
})

describe("settings files", () => {
  const settings = {
    hooks: {
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "guard.sh", timeout: 2 }] }],
      PostToolUse: [
        {
          matcher: "mcp__.*",
          hooks: [
            { type: "prompt", prompt: "check this" },
            { type: "command", command: "post.py" }
          ]
        }
      ],
      Stop: [{ hooks: [{ type: "command", command: "stop.sh" }] }]
    }
  }
  it("keeps command hooks of supported events and says why the others are left", () => {
    const read = readSettings("claude", settings)
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.hooks.map((h) => [h.where, h.event, h.matcher, h.timeoutMs])).toEqual([
      ["hooks.PreToolUse[0].hooks[0]", "tool_call", "Bash", 2000],
      ["hooks.PostToolUse[0].hooks[1]", "tool_result", "mcp__.*", undefined]
    ])
    expect(read.success.skipped.map((s) => s.where)).toEqual([
      "hooks.PostToolUse[0].hooks[0]",
      "hooks.Stop[0].hooks[0] (stop.sh)"
    ])
    expect(read.success.skipped[0]?.why).toContain("prompt hook is not a command")
    const config = toConfig(read.success, { command: "abhed-ext", args: [] }, "/p")
    expect(config.extensions[0]).toMatchObject({
      events: ["tool_call"],
      match: [{ tool: "bash" }, { tool: "Bash" }],
      timeout_ms: 3000,
      cwd: "/p"
    })
    // A regex matcher stays with the adapter: no match rules.
    expect(config.extensions[1]?.["match"]).toBeUndefined()
    expect(config.extensions[1]?.["args"]).toEqual([
      "hook",
      "--format=claude",
      "--matcher=mcp__.*",
      "--",
      "bash",
      "-c",
      "post.py"
    ])
  })
  it("asks for enough settling rounds for every hook of one event to append: one per hook, and one more", () => {
    const post = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "command", command: `post-${i}.sh` }))
    const few = readSettings("claude", { hooks: { PostToolUse: [{ matcher: "Bash", hooks: post(3) }] } })
    const many = readSettings("claude", { hooks: { PostToolUse: [{ matcher: "Bash", hooks: post(6) }] } })
    if (Result.isFailure(few) || Result.isFailure(many)) throw new Error("unreadable")
    const launch = { command: "abhed-ext", args: [] }
    // Three hooks settle within the default 4 rounds; six need 7 (four used to withhold every result).
    expect(toConfig(few.success, launch, "/p").max_rewrite_rounds).toBeUndefined()
    expect(toConfig(many.success, launch, "/p").max_rewrite_rounds).toBe(7)
  })

  it("leaves async hooks and other shells, and says what an if condition changes", () => {
    const read = readSettings("claude", {
      hooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              { type: "command", command: "log.sh", async: true },
              { type: "command", command: "g.ps1", shell: "powershell" },
              { type: "command", command: "push.sh", if: "Bash(git push*)" }
            ]
          }
        ]
      }
    })
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.hooks.map((h) => h.command)).toEqual(["push.sh"])
    expect(read.success.skipped.map((s) => s.why)).toEqual([
      expect.stringContaining("an async hook runs in the background"),
      expect.stringContaining("it runs in powershell")
    ])
    expect(read.success.warnings).toEqual([
      {
        where: "hooks.PreToolUse[0].hooks[2] (push.sh)",
        why: expect.stringContaining('"if" condition "Bash(git push*)" is not carried over')
      }
    ])
  })

  it("a timeout is at least 1 ms and at most what a timer can wait, and the config stays one run accepts", () => {
    const read = readSettings("claude", {
      hooks: {
        PreToolUse: [
          {
            hooks: [
              { type: "command", command: "tiny.sh", timeout: 0.0004 },
              { type: "command", command: "long.sh", timeout: 3_000_000 },
              { type: "command", command: "huge.sh", timeout: 1e20 }
            ]
          }
        ]
      }
    })
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.hooks.map((h) => h.timeoutMs)).toEqual([1, MaxHookTimeoutMs, MaxHookTimeoutMs])
    // The extension's startup_timeout_ms (the hook's plus 5 s) is then what a timer can wait, 2^31-1 ms.
    expect(MaxHookTimeoutMs).toBe(2_147_483_647 - 5000)
    expect(read.success.warnings.map((w) => [w.where, w.why])).toEqual([
      ["hooks.PreToolUse[0].hooks[0] (tiny.sh)", expect.stringContaining("rounded up to 1 ms")],
      ["hooks.PreToolUse[0].hooks[1] (long.sh)", expect.stringContaining("clamped to 2147478647 ms")],
      ["hooks.PreToolUse[0].hooks[2] (huge.sh)", expect.stringContaining("clamped to 2147478647 ms")]
    ])
    const config = toConfig(read.success, { command: "abhed-ext", args: [] }, "/p")
    expect(config.extensions.map((e) => (e["args"] as Array<string>)[2])).toEqual([
      "--timeout-ms=1",
      "--timeout-ms=2147478647",
      "--timeout-ms=2147478647"
    ])
    expect(config.extensions.map((e) => [e["timeout_ms"], e["startup_timeout_ms"]])[1]).toEqual([
      2147479647, 2147483647
    ])
    expect(Result.isSuccess(decodeConfig(config))).toBe(true)
    const gemini = readSettings("gemini", {
      hooks: { BeforeTool: [{ hooks: [{ type: "command", command: "g.sh", timeout: 0.2 }] }] }
    })
    if (Result.isFailure(gemini)) throw new Error(gemini.failure)
    expect(gemini.success.hooks.map((h) => h.timeoutMs)).toEqual([1])
  })

  it("says what it drops of a hook: a Gemini hook's env, a matcher on an event that is not a tool's", () => {
    const read = readSettings("gemini", {
      hooks: {
        BeforeTool: [
          {
            matcher: "run_shell_command",
            hooks: [{ type: "command", command: "g.sh", env: { MODE: "strict", TOKEN: "s3cret" } }]
          }
        ],
        SessionStart: [{ matcher: "resume", hooks: [{ type: "command", command: "s.sh" }] }],
        SessionEnd: [{ matcher: "*", hooks: [{ type: "command", command: "e.sh" }] }]
      }
    })
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.hooks.map((h) => h.command)).toEqual(["g.sh", "s.sh", "e.sh"])
    expect(read.success.warnings).toEqual([
      {
        where: "hooks.BeforeTool[0].hooks[0] (g.sh)",
        why: expect.stringContaining("its env (MODE, TOKEN) is not carried over")
      },
      {
        where: "hooks.SessionStart[0].hooks[0] (s.sh)",
        why: expect.stringContaining('its matcher "resume" is not carried over')
      }
    ])
    // Names only: a value may be a secret.
    expect(JSON.stringify(read.success.warnings)).not.toContain("s3cret")
    const claudeRead = readSettings("claude", {
      hooks: { SessionStart: [{ matcher: "compact", hooks: [{ type: "command", command: "c.sh" }] }] }
    })
    if (Result.isFailure(claudeRead)) throw new Error(claudeRead.failure)
    expect(claudeRead.success.warnings.map((w) => w.why)).toEqual([
      expect.stringContaining('its matcher "compact" is not carried over')
    ])
  })

  it("reads a Gemini settings file with comments, as Gemini CLI does; Claude's stays strict JSON", () => {
    const text = '{\n  // hooks of this project\n  "hooks": { /* guard */ "BeforeTool": [] }\n}\n'
    expect(parseSettings(text, undefined)).toEqual(
      Result.succeed({ format: "gemini", settings: { hooks: { BeforeTool: [] } } })
    )
    expect(parseSettings(text, "gemini")).toEqual(
      Result.succeed({ format: "gemini", settings: { hooks: { BeforeTool: [] } } })
    )
    const claudeText = '{\n  // hooks\n  "hooks": { "PreToolUse": [] }\n}'
    expect(parseSettings(claudeText, undefined)).toEqual(Result.fail(expect.stringMatching(/^not JSON: /)))
    expect(parseSettings(claudeText, "gemini")).toMatchObject(Result.succeed({ format: "gemini" }))
    // Gemini CLI refuses a trailing comma too (strip-json-comments, then JSON.parse): where it is.
    expect(parseSettings('{\n  // c\n  "hooks": { "BeforeTool": [], }\n}', "gemini")).toEqual(
      Result.fail(expect.stringContaining("line 3, column 30: trailing comma"))
    )
    expect(parseSettings('{ "hooks": { "PreToolUse": [] } }', undefined)).toEqual(
      Result.succeed({ format: "claude", settings: { hooks: { PreToolUse: [] } } })
    )
  })

  it("tells Gemini settings by their event names", () => {
    expect(detectFormat({ hooks: { BeforeTool: [] } })).toBe("gemini")
    expect(detectFormat({ hooks: { PreToolUse: [] } })).toBe("claude")
    const read = readSettings("gemini", {
      hooks: {
        enabled: true,
        BeforeTool: [{ matcher: "run_shell_command", hooks: [{ type: "command", command: "g.sh", timeout: 500 }] }]
      }
    })
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.hooks.map((h) => [h.event, h.timeoutMs])).toEqual([["tool_call", 500]])
    expect(read.success.skipped).toEqual([])
  })
})
