import { spawnSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Request } from "@abhed/protocol"
import type { HookFormat } from "../../packages/cli/src/hook/HookFormat.ts"
import { toolPart } from "../../packages/cli/src/hook/HookInput.ts"
import { quoteProjectDir } from "../../packages/cli/src/hook/HookCommandLine.ts"
import { toConfig } from "../../packages/cli/src/hook/HookConfig.ts"
import { matches, parseMatcher } from "../../packages/cli/src/hook/HookMatcher.ts"
import { matcherWarning } from "../../packages/cli/src/hook/HookMatcherCheck.ts"
import { mapRun } from "../../packages/cli/src/hook/HookOutcome.ts"
import type { HookRun } from "../../packages/cli/src/hook/HookRunner.ts"
import { parseSettings, readSettings } from "../../packages/cli/src/hook/HookSettings.ts"
import { toolNames } from "../../packages/cli/src/hook/HookToolNames.ts"
import { jsonLines, runCli } from "../support/cli-helpers.ts"

/**
 * An attack pass on `abhed-ext hook` and `import-hooks` (docs/hooks.md): answers in odd shapes that lost a deny or a
 * redaction, and a settings file read as the wrong peer's.
 */

type Line = Record<string, unknown>
const typed = Schema.decodeUnknownSync(Request)
const exited = (code: number, stdout = "", stderr = ""): HookRun => ({ _tag: "Exited", code, stdout, stderr })
const call = (command: string): Line => ({
  event: "tool_call",
  session_id: "s",
  call_id: "c-1",
  tool: "bash",
  args: { command }
})
const result = (tool: string, content: string): Line => ({
  event: "tool_result",
  session_id: "s",
  call_id: "c-1",
  tool,
  args: {},
  content,
  is_error: false
})
const map = (request: Line, run: HookRun, format: HookFormat, failClosed = false) =>
  mapRun(String(request["event"]), toolPart(typed(request), toolNames(format)), run, {
    format,
    failClosed,
    label: "hook"
  })

describe("a Gemini answer encoded twice (a JSON string holding the JSON)", () => {
  it("is read as Gemini CLI reads it, once more: its deny blocks", () => {
    const answer = JSON.stringify(JSON.stringify({ decision: "deny", reason: "no secrets" }))
    expect(map(call("cat .env"), exited(0, answer), "gemini").reply).toEqual({ block: true, reason: "no secrets" })
    // A string that is not JSON inside is plain text, as in Gemini CLI: no opinion.
    expect(map(call("ls"), exited(0, JSON.stringify("all good")), "gemini").reply).toEqual({})
    // Claude Code does not read it twice: a JSON string is no answer there.
    expect(map(call("cat .env"), exited(0, answer), "claude").reply).toEqual({})
  })
})

describe("an answer that starts with { but is not JSON (a second line after it, a cut)", () => {
  const answer = `${JSON.stringify({ decision: "block", reason: "no" })}\ndone`
  it("is a failed run: answered failed (the extension's on_failure decides), a block with --fail-closed", () => {
    for (const format of ["claude", "gemini"] as const) {
      expect(map(call("rm -rf /"), exited(0, answer), format).reply).toEqual({
        failed: "hook failed: its stdout starts with { but is not JSON"
      })
      expect(map(call("rm -rf /"), exited(0, answer), format, true).reply).toEqual({
        block: true,
        reason: "hook failed: its stdout starts with { but is not JSON (--fail-closed)"
      })
    }
    // Plain text stays the peer's debug output: no opinion, no note.
    expect(map(call("ls"), exited(0, "checked ls"), "claude", true).reply).toEqual({})
  })
})

describe("a decision value the peer does not know", () => {
  it('Claude decision deny, permissionDecision Deny or block, Gemini decision Deny, continue "false": a failed run, not a silent pass', () => {
    const cases: ReadonlyArray<readonly [HookFormat, unknown, string]> = [
      ["claude", { decision: "deny", reason: "x" }, 'decision "deny"'],
      ["claude", { hookSpecificOutput: { permissionDecision: "Deny" } }, 'permissionDecision "Deny"'],
      ["claude", { hookSpecificOutput: { permissionDecision: "block" } }, 'permissionDecision "block"'],
      ["gemini", { decision: "Deny" }, 'decision "Deny"'],
      ["gemini", { decision: true }, "decision true"],
      // A stop written as a string: continue is a boolean in both peers.
      ["claude", { continue: "false", stopReason: "stop" }, 'continue "false"'],
      ["gemini", { continue: 0 }, "continue 0"]
    ]
    for (const [format, answer, said] of cases) {
      const open = map(call("rm -rf /"), exited(0, JSON.stringify(answer)), format).reply
      expect(Object.keys(open), JSON.stringify(answer)).toEqual(["failed"])
      expect(String(open["failed"])).toContain(`hook failed: it answered ${said}, which is not one of`)
      const closed = map(call("rm -rf /"), exited(0, JSON.stringify(answer)), format, true).reply
      expect(closed["block"], JSON.stringify(answer)).toBe(true)
    }
    // Known values and null stay what they were.
    expect(map(call("ls"), exited(0, JSON.stringify({ decision: null })), "claude", true).reply).toEqual({})
    expect(map(call("ls"), exited(0, JSON.stringify({ decision: "allow" })), "gemini", true).reply).toEqual({
      reason: 'the hook answered decision "allow": an extension may veto, never permit; no opinion'
    })
  })
})

describe("Claude's permissionDecision written beside hookSpecificOutput, not in it", () => {
  it("is no answer in Claude Code: a failed run, answered failed, a block with --fail-closed", () => {
    const answer = exited(0, JSON.stringify({ permissionDecision: "deny", permissionDecisionReason: "no" }))
    expect(map(call("rm -rf /"), answer, "claude").reply).toEqual({
      failed: 'hook failed: it answered permissionDecision "deny" outside hookSpecificOutput, where it is not read'
    })
    expect(map(call("rm -rf /"), answer, "claude", true).reply["block"]).toBe(true)
    // An allow there lifts nothing either way: no failure.
    expect(map(call("ls"), exited(0, JSON.stringify({ permissionDecision: "allow" })), "claude", true).reply).toEqual(
      {}
    )
  })
})

describe("a rewrite in the wrong shape (updatedInput as a string, tool_output as a number)", () => {
  it("is a failed run: the change the hook meant is not silently dropped for the original", () => {
    const claudeRewrite = exited(
      0,
      JSON.stringify({ hookSpecificOutput: { permissionDecision: "allow", updatedInput: "git status" } })
    )
    expect(map(call("git push --force"), claudeRewrite, "claude").reply).toEqual({
      failed: "hook failed: its updatedInput is not an object: the rewrite was not read"
    })
    expect(map(call("git push --force"), claudeRewrite, "claude", true).reply["block"]).toBe(true)
    const geminiInput = exited(0, JSON.stringify({ hookSpecificOutput: { tool_input: ["ls"] } }))
    expect(map(call("rm -rf /"), geminiInput, "gemini", true).reply).toEqual({
      block: true,
      reason: "hook failed: its tool_input is not an object: the rewrite was not read (--fail-closed)"
    })
    const geminiOutput = exited(0, JSON.stringify({ hookSpecificOutput: { tool_output: 42 } }))
    expect(map(result("read", "sk-live-123"), geminiOutput, "gemini", true).reply).toMatchObject({ is_error: true })
    // The right shapes rewrite as before.
    const good = exited(0, JSON.stringify({ hookSpecificOutput: { updatedInput: { command: "ls" } } }))
    expect(map(call("ls -a"), good, "claude", true).reply).toEqual({ args: { command: "ls" } })
  })
})

describe("Claude's updatedMCPToolOutput", () => {
  const redact = (value: unknown) =>
    exited(0, JSON.stringify({ hookSpecificOutput: { hookEventName: "PostToolUse", updatedMCPToolOutput: value } }))
  it("replaces an MCP tool's output: a redaction is not lost", () => {
    expect(map(result("mcp__vault__read", "sk-live-123"), redact("[redacted]"), "claude").reply).toEqual({
      content: "[redacted]"
    })
    const blocks = [{ type: "text", text: "[redacted]" }]
    expect(map(result("mcp__vault__read", "sk-live-123"), redact(blocks), "claude").reply).toEqual({
      content: JSON.stringify(blocks)
    })
  })
  it("is for MCP tools only, as in Claude Code: another tool's output stays", () => {
    expect(map(result("bash", "hello"), redact("[redacted]"), "claude").reply).toEqual({})
  })
})

describe("a Claude matcher that lists names with commas or spaces (Edit, Write)", () => {
  const m = (source: string, tool: string) => {
    const parsed = parseMatcher("claude", source)
    if (Result.isFailure(parsed)) throw new Error(parsed.failure)
    return matches(parsed.success, tool)
  }
  it("is a list of exact names, as Claude Code reads it: the hook runs on each, not on none", () => {
    for (const source of ["Edit, Write", "Edit | Write", "Edit,Write", " Edit|Write ", "Edit,\tWrite"]) {
      expect(m(source, "Edit"), source).toBe(true)
      expect(m(source, "Write"), source).toBe(true)
      expect(m(source, "Read"), source).toBe(false)
      expect(m(source, "EditNotebook"), source).toBe(false)
    }
    expect(m("Bash ", "Bash")).toBe(true)
    // Nothing but separators and spaces is an empty matcher: every tool.
    expect(m(" ", "Read")).toBe(true)
  })
  it("import-hooks writes match rules for each name, so the host sends the adapter those calls", () => {
    const read = readSettings("claude", {
      hooks: { PreToolUse: [{ matcher: "Edit, Write", hooks: [{ type: "command", command: "./guard.sh" }] }] }
    })
    if (Result.isFailure(read)) throw new Error(read.failure)
    const [extension] = toConfig(read.success, { command: "abhed-ext", args: [] }, ".").extensions
    expect(extension?.["match"]).toEqual([{ tool: "edit" }, { tool: "Edit" }, { tool: "write" }, { tool: "Write" }])
  })
})

describe("import-hooks with a matcher that matches none of the peer's tools, or one with no counterpart here", () => {
  it("says so: bash for Bash, permission syntax, a file pattern; MultiEdit and WebFetch run only on tools of that name", () => {
    const warned = (format: HookFormat, matcher: string) => matcherWarning(format, matcher) ?? ""
    for (const matcher of ["bash", "Bash(git:*)", "Edit:.*\\.cs", "Shell"]) {
      expect(warned("claude", matcher), matcher).toContain("matches none of Claude Code's tools")
    }
    expect(warned("gemini", "Bash")).toContain("matches none of Gemini CLI's tools")
    expect(warned("claude", "Edit|MultiEdit|Write")).toContain("its matcher covers MultiEdit, which no tool here")
    expect(warned("gemini", "web_fetch")).toContain("--tool-names=YOURS=web_fetch")
    expect(warned("claude", "^Notebook")).toContain("its matcher covers NotebookEdit, NotebookRead")
    // What matches as meant is not warned about.
    for (const matcher of ["Bash", "Edit, Write", "mcp__github__.*", "mcp__x__y", "^(Edit|Write)$", "*", ".*"]) {
      expect(matcherWarning("claude", matcher), matcher).toBeUndefined()
    }
    expect(matcherWarning("gemini", "read_.*|write_file")).toBeUndefined()
  })
  it("the warning reaches import-hooks' list, with where the hook is", () => {
    const read = readSettings("claude", {
      hooks: { PreToolUse: [{ matcher: "bash", hooks: [{ type: "command", command: "./guard.sh" }] }] }
    })
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.warnings).toMatchObject([
      { where: "hooks.PreToolUse[0].hooks[0] (./guard.sh)", why: expect.stringContaining('its matcher "bash"') }
    ])
  })
})

describe("import-hooks with a matcher or timeout of the wrong type", () => {
  it("says so for each hook: a matcher that is not a string runs the hook on every call; a timeout that is not a number is the default", () => {
    const read = readSettings("claude", {
      hooks: {
        PreToolUse: [
          { matcher: { tool_name: "Edit" }, hooks: [{ type: "command", command: "./fmt.sh" }] },
          { matcher: "Bash", hooks: [{ type: "command", command: "./guard.sh", timeout: "30" }] }
        ]
      }
    })
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.hooks).toHaveLength(2)
    expect(read.success.warnings).toEqual([
      {
        where: "hooks.PreToolUse[0].hooks[0] (./fmt.sh)",
        why: 'its matcher {"tool_name":"Edit"} is not a string: the hook runs on every tool_call; write the names as one string ("Edit|Write")'
      },
      {
        where: "hooks.PreToolUse[1].hooks[0] (./guard.sh)",
        why: 'its timeout "30" is not a positive number: the adapter\'s default bound applies'
      }
    ])
  })
})

describe("a Gemini hook's $GEMINI_PROJECT_DIR, unquoted, in a project whose path has a space", () => {
  it("import-hooks quotes it, as Gemini CLI puts the folder into the line quoted: the guard starts and blocks", () => {
    const project = join(mkdtempSync(join(tmpdir(), "abhed-hook-attacks-")), "My Project")
    mkdirSync(join(project, ".gemini", "hooks"), { recursive: true })
    const guard = join(project, ".gemini", "hooks", "guard.sh")
    writeFileSync(guard, "#!/usr/bin/env bash\necho blocked >&2\nexit 2\n")
    chmodSync(guard, 0o755)
    const line = "$GEMINI_PROJECT_DIR/.gemini/hooks/guard.sh"
    const read = readSettings("gemini", { hooks: { BeforeTool: [{ hooks: [{ type: "command", command: line }] }] } })
    if (Result.isFailure(read)) throw new Error(read.failure)
    const args = toConfig(read.success, { command: "abhed-ext", args: [] }, ".").extensions[0]?.["args"]
    expect(Array.isArray(args)).toBe(true)
    const written = Array.isArray(args) ? String(args.at(-1)) : ""
    expect(written).toBe('"$GEMINI_PROJECT_DIR"/.gemini/hooks/guard.sh')
    const env = { ...process.env, GEMINI_PROJECT_DIR: project }
    // As the adapter runs it: bash -c LINE. The line as written splits the path and never reaches the guard.
    expect(spawnSync("bash", ["-c", line], { env }).status).toBe(127)
    expect(spawnSync("bash", ["-c", written], { env }).status).toBe(2)
  })
  it("quotes it outside double quotes, reopens single quotes around it, and leaves the rest as it is", () => {
    expect(quoteProjectDir("python3 $CLAUDE_PROJECT_DIR/h.py")).toBe('python3 "$CLAUDE_PROJECT_DIR"/h.py')
    expect(quoteProjectDir('"$GEMINI_PROJECT_DIR/h.sh"')).toBe('"$GEMINI_PROJECT_DIR/h.sh"')
    expect(quoteProjectDir("echo '$GEMINI_PROJECT_DIR'")).toBe(`echo ''"$GEMINI_PROJECT_DIR"''`)
    // An escaped $ is literal to the shell: left so.
    expect(quoteProjectDir("echo \\$GEMINI_PROJECT_DIR")).toBe("echo \\$GEMINI_PROJECT_DIR")
    expect(quoteProjectDir("$GEMINI_PROJECT_DIR_OLD/x ${GEMINI_PROJECT_DIR}/y")).toBe(
      "$GEMINI_PROJECT_DIR_OLD/x ${GEMINI_PROJECT_DIR}/y"
    )
  })
})

describe("import-hooks with the same hook listed twice", () => {
  it("carries it over once, as the peers run it once: a second adapter would run it twice per call", () => {
    const guard = { type: "command", command: "./guard.sh" }
    const read = readSettings("claude", {
      hooks: {
        PreToolUse: [
          { matcher: "Bash", hooks: [guard, guard] },
          { matcher: "Bash", hooks: [guard] },
          { matcher: "Edit", hooks: [guard] }
        ]
      }
    })
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.hooks.map((h) => h.where)).toEqual([
      "hooks.PreToolUse[0].hooks[0]",
      "hooks.PreToolUse[2].hooks[0]"
    ])
    expect(read.success.skipped).toEqual([
      {
        where: "hooks.PreToolUse[0].hooks[1] (./guard.sh)",
        why: "the same command and matcher as hooks.PreToolUse[0].hooks[0]: it runs once"
      },
      {
        where: "hooks.PreToolUse[1].hooks[0] (./guard.sh)",
        why: "the same command and matcher as hooks.PreToolUse[0].hooks[0]: it runs once"
      }
    ])
  })
})

describe("import-hooks with a file that turns its hooks off", () => {
  it("Gemini hooks.enabled false and hooks.disabled: said, since every hook is carried over and runs", () => {
    const read = readSettings("gemini", {
      hooks: {
        enabled: false,
        disabled: ["noisy"],
        BeforeTool: [{ hooks: [{ type: "command", name: "noisy", command: "./noisy.sh" }] }]
      }
    })
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.hooks).toHaveLength(1)
    expect(read.success.switches?.map((s) => `${s.where}: ${s.why}`)).toEqual([
      "hooks.enabled: false, not carried over: every hook of the file is, and runs; remove from the config what you keep off",
      'hooks.disabled: ["noisy"], not carried over: every hook of the file is, and runs; remove from the config what you keep off'
    ])
  })
  it("Claude disableAllHooks: said on import-hooks' stderr", async () => {
    const settings = {
      disableAllHooks: true,
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./guard.sh" }] }] }
    }
    const r = await runCli(["import-hooks", "--format", "claude", "-"], { input: JSON.stringify(settings) })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(
      "-: disableAllHooks: true, not carried over: every hook of the file is, and runs; remove from the config what you keep off"
    )
  })
})

describe("import-hooks tells a Gemini CLI file by its events", () => {
  it("a file with BeforeTool and Notification (both peers have Notification) is Gemini's: its guard is carried over", () => {
    const text = JSON.stringify({
      hooks: {
        BeforeTool: [
          { matcher: "run_shell_command", hooks: [{ type: "command", command: "./guard.sh", timeout: 5000 }] }
        ],
        Notification: [{ hooks: [{ type: "command", command: "./notify.sh" }] }]
      }
    })
    const parsed = parseSettings(text, undefined)
    if (Result.isFailure(parsed)) throw new Error(parsed.failure)
    expect(parsed.success.format).toBe("gemini")
    const read = readSettings(parsed.success.format, parsed.success.settings)
    if (Result.isFailure(read)) throw new Error(read.failure)
    // Gemini's timeout is in milliseconds: 5000 is 5 s, not 5000 s.
    expect(read.success.hooks).toMatchObject([{ peerEvent: "BeforeTool", event: "tool_call", timeoutMs: 5000 }])
    expect(read.success.skipped.map((s) => s.where)).toEqual(["hooks.Notification[0].hooks[0] (./notify.sh)"])
  })
})

describe("odd answers through the adapter, one CLI start per peer", () => {
  const script = join(mkdtempSync(join(tmpdir(), "abhed-hook-attacks-")), "answers.sh")
  writeFileSync(
    script,
    [
      "#!/usr/bin/env bash",
      "in=$(cat)",
      'case "$in" in',
      `  *twice*) printf '%s\\n' '"{\\"decision\\":\\"deny\\",\\"reason\\":\\"encoded twice\\"}"' ;;`,
      `  *trailing*) printf '%s\\n' '{"decision":"block","reason":"no"}' 'done' ;;`,
      `  *claude_deny*) printf '%s\\n' '{"decision":"deny","reason":"no"}' ;;`,
      `  *redact*) printf '%s\\n' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":"[redacted]"}}' ;;`,
      "esac",
      "exit 0",
      ""
    ].join("\n")
  )
  chmodSync(script, 0o755)
  const line = (id: string, request: Line) => JSON.stringify({ id, ...request })
  const patient = ["--timeout-ms", "20000"]

  it("Gemini: a deny encoded twice blocks", async () => {
    const r = await runCli(["hook", "--format", "gemini", ...patient, "--", script], {
      input: `${[line("g1", call("echo twice")), line("g2", call("echo fine"))].join("\n")}\n`
    })
    expect(r.code, r.stderr).toBe(0)
    expect(jsonLines(r.stdout)).toEqual([{ id: "g1", block: true, reason: "encoded twice" }, { id: "g2" }])
  })

  it("Claude with --fail-closed: broken JSON and an unknown decision block; an MCP redaction lands; plain exit 0 passes", async () => {
    const r = await runCli(["hook", "--format", "claude", "--fail-closed", ...patient, "--", script], {
      input: `${[
        line("c1", call("echo trailing")),
        line("c2", call("echo claude_deny")),
        line("c3", { ...result("mcp__vault__read", "sk-live-123"), args: { key: "redact" } }),
        line("c4", call("echo fine"))
      ].join("\n")}\n`
    })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out[0]).toEqual({
      id: "c1",
      block: true,
      reason: "hook failed: its stdout starts with { but is not JSON (--fail-closed)"
    })
    expect(out[1]).toMatchObject({ id: "c2", block: true })
    expect(String(out[1]?.["reason"])).toContain('it answered decision "deny", which is not one of approve, block')
    expect(out[2]).toEqual({ id: "c3", content: "[redacted]" })
    expect(out[3]).toEqual({ id: "c4" })
    expect(out).toHaveLength(4)
  })
})
