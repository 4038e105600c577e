import { isJsonObject } from "@abhed/protocol/Json"
import type { HookFormat } from "./HookFormat.ts"
import type { Json, ToolPart } from "./HookInput.ts"
import { type HookRun, MaxStdoutBytes } from "./HookRunner.ts"
import { argsFromPeer, argsToPeer } from "./HookToolNames.ts"
import { failedWhy, firstLine, tail } from "./HookFailureText.ts"
import {
  claudeDecisions,
  claudePermissions,
  geminiDecisions,
  mcpOutput,
  rewrite,
  tellMisplaced,
  tellUnknown
} from "./HookAnswerValues.ts"

/**
 * How one run of a peer's hook becomes our reply (docs/hooks.md, "The mapping"). Veto only: a hook can block, ask
 * and rewrite; its "allow" / "approve" is no opinion, and the reply says so in `reason` (which counts for nothing
 * without `block` or `ask`, but is kept in the audit record).
 */

export interface MapOptions {
  readonly format: HookFormat
  /**
   * A run that failed (timed out, crashed, could not start, exited other than 0 or 2, its stdout was cut, or its
   * answer starts with `{` and does not parse or holds a decision the peer does not know) blocks, instead of being
   * answered `failed` (the extension's `on_failure` then decides).
   */
  readonly failClosed: boolean
  /** For messages: the hook's command line. */
  readonly label: string
}

export interface Mapped {
  /** The reply, without `id` (the caller echoes it). */
  readonly reply: Record<string, unknown>
  /** Lines for our stderr. */
  readonly log: ReadonlyArray<string>
}

type Level = "none" | "ask" | "block"

/** What the hook said, before it is shaped into a reply for the event at hand. */
interface Said {
  level: Level
  reasons: Array<string>
  notes: Array<string>
  /** `tool_call`: the peer-shaped input to run instead (Claude `updatedInput`, Gemini `tool_input`, merged). */
  input?: Json | undefined
  /** `tool_result`: text that replaces the output (Gemini `tool_output`, or its block reason). */
  replaceContent?: string | undefined
  /** `tool_result`: text appended to the output (`additionalContext`, both peers). */
  appendContent: Array<string>
  /** What the hook said that would have permitted the call in its own agent (an allow), if it did. */
  allowed?: string | undefined
  /** The run failed (without --fail-closed): what the reply's `failed` says, unless the hook's answer did change something. */
  failed?: string | undefined
}

const stricter = (a: Level, b: Level): Level =>
  a === "block" || b === "block" ? "block" : a === "ask" || b === "ask" ? "ask" : "none"

/**
 * How much of a hook's reason goes into a reply. A reply longer than the host takes (16 MiB) gets the adapter marked
 * dead: a hook that denies with a reason that long (a file echoed whole, in a multi-byte script: the stdout cap counts
 * characters) would lose its deny, and every later call its hooks, to `on_failure`. Cut, the deny stands.
 */
export const ReasonMaxChars = 16 * 1024

const raise = (said: Said, level: Level, reason: string | undefined, fallback: string) => {
  said.level = stricter(said.level, level)
  const given = reason?.trim() ?? ""
  said.reasons.push(
    given === "" ? fallback : given.length > ReasonMaxChars ? `${given.slice(0, ReasonMaxChars - 1)}…` : given
  )
}

const isString = (u: unknown): u is string => typeof u === "string"
const text = (u: unknown): string | undefined => (isString(u) ? u : undefined)

const emptySaid = (): Said => ({ level: "none", reasons: [], notes: [], appendContent: [] })

/** An allow: noted in the reply (for the audit record) and said on stderr, since it changes nothing here. */
const allow = (said: Said, answered: string) => {
  said.notes.push(`${answered}: an extension may veto, never permit; no opinion`)
  said.allowed = answered
}

/** Exit 0 with JSON on stdout: the peer's structured answer. `unknown` is told of a value the peer does not know. */
const readJson = (
  format: HookFormat,
  event: string,
  peerTool: string | undefined,
  out: Json,
  said: Said,
  unknown: (problem: string) => void
) => {
  const specific = isJsonObject(out["hookSpecificOutput"]) ? out["hookSpecificOutput"] : {}
  const reason = text(out["reason"])
  if (out["continue"] === false) raise(said, "block", text(out["stopReason"]), "the hook stopped (continue: false)")
  const decision = text(out["decision"])
  tellUnknown("continue", out["continue"], [true, false], unknown)
  tellUnknown("decision", out["decision"], format === "claude" ? claudeDecisions : geminiDecisions, unknown)
  if (format === "claude") {
    if (decision === "block") raise(said, "block", reason, "the hook blocked (decision: block)")
    if (decision === "approve") allow(said, 'the hook answered decision "approve"')
    if (event === "tool_call") {
      const permission = text(specific["permissionDecision"])
      const why = text(specific["permissionDecisionReason"])
      tellUnknown("permissionDecision", specific["permissionDecision"], claudePermissions, unknown)
      tellMisplaced(out["permissionDecision"], unknown)
      if (permission === "deny") raise(said, "block", why, "the hook denied (permissionDecision: deny)")
      if (permission === "ask") raise(said, "ask", why, "the hook asks (permissionDecision: ask)")
      if (permission === "allow" || permission === "defer") {
        allow(said, `the hook answered permissionDecision "${permission}"${why !== undefined ? ` (${why})` : ""}`)
      }
      said.input = rewrite(specific["updatedInput"], "updatedInput", isJsonObject, "an object", unknown)
    }
    if (event === "tool_result") {
      const replaced = mcpOutput(specific["updatedMCPToolOutput"])
      if (replaced !== undefined && peerTool?.startsWith("mcp__") === true) said.replaceContent = replaced
      const extra = text(specific["additionalContext"])
      if (extra !== undefined && extra !== "") said.appendContent.push(extra)
    }
    return
  }
  // Gemini CLI
  if (decision === "deny" || decision === "block")
    raise(said, "block", reason, `the hook denied (decision: ${decision})`)
  if (decision === "ask") raise(said, "ask", reason, "the hook asks (decision: ask)")
  if (decision === "allow" || decision === "approve") {
    allow(said, `the hook answered decision "${decision}"`)
  }
  if (event === "tool_call")
    said.input = rewrite(specific["tool_input"], "tool_input", isJsonObject, "an object", unknown)
  if (event === "tool_result") {
    const replaced = rewrite(specific["tool_output"], "tool_output", isString, "a string", unknown)
    if (replaced !== undefined) said.replaceContent = replaced
    const extra = text(specific["additionalContext"])
    if (extra !== undefined && extra !== "") said.appendContent.push(extra)
  }
}

/** Exit code, stdout and stderr: what the hook said, per the peer's rules. */
const interpret = (
  run: HookRun,
  event: string,
  tool: string | undefined,
  options: MapOptions,
  log: Array<string>
): Said => {
  const said = emptySaid()
  /**
   * The run failed: the hook gave no answer. With --fail-closed that is a block. Without, the reply says `failed`,
   * and the extension's `on_failure` decides (its default, ignore, is the peers' "non-blocking error": no opinion);
   * the host records it and warns (`logged`: the full account, for our stderr; `summary`: what the reply says).
   */
  const failed = (summary: string, logged: string) => {
    log.push(`${options.label}: ${logged}`)
    if (options.failClosed) raise(said, "block", undefined, `hook failed: ${summary} (--fail-closed)`)
    else said.failed = summary
  }
  switch (run._tag) {
    case "SpawnFailed":
      failed(`could not start: ${run.detail}`, `could not start: ${run.detail}`)
      return said
    case "TimedOut":
      failed(
        `did not finish within ${run.timeoutMs} ms${firstLine(run.stderr)}`,
        `did not finish within ${run.timeoutMs} ms; it was killed with every process it started${tail(run.stderr)}`
      )
      return said
    case "Signaled":
      failed(`was killed by ${run.signal}${firstLine(run.stderr)}`, `was killed by ${run.signal}${tail(run.stderr)}`)
      return said
    case "Exited":
      break
  }
  if (run.code === 2) {
    raise(said, "block", run.stderr, "the hook exited with code 2")
    return said
  }
  if (run.code !== 0) {
    // The peers' "non-blocking error" (1 for a missing module, 126 / 127 when the shell could not run the hook).
    const why = run.code === 127 ? " (command not found)" : run.code === 126 ? " (not executable)" : ""
    failed(`exit ${run.code}${firstLine(run.stderr)}`, `exited with code ${run.code}${why}${tail(run.stderr)}`)
    return said
  }
  if (run.stdoutCut === true) {
    // Only the start of the answer is here: parsed, a deny would read as "not JSON" and be lost.
    const limit = `${MaxStdoutBytes / (1024 * 1024)} MiB`
    failed(`its stdout passed the ${limit} limit and was cut`, `stdout passed ${limit} and was cut; not read`)
    return said
  }
  const trimmed = run.stdout.trim()
  if (trimmed === "") return said
  let parsed: unknown
  try {
    parsed = JSON.parse(trimmed)
    // Gemini CLI parses a JSON string once more: a hook that encoded its answer twice still denies there.
    if (options.format === "gemini" && typeof parsed === "string") parsed = JSON.parse(parsed)
  } catch {
    // Plain text on stdout is the peer's transcript/debug output, not an answer. An object that does not parse (a
    // second line after it, a cut) was meant as one: what it said is unknown, so the run failed.
    if (trimmed.startsWith("{"))
      failed("its stdout starts with { but is not JSON", "stdout starts with { but is not JSON; not read")
    return said
  }
  if (isJsonObject(parsed)) {
    const problems: Array<string> = []
    readJson(options.format, event, tool, parsed, said, (problem) => problems.push(problem))
    if (problems.length > 0) failed(problems.join("; "), `${problems.join("; ")}; not read as a decision`)
  }
  return said
}

const joinReasons = (reasons: ReadonlyArray<string>): string => reasons.join("; ")

/**
 * `content` with `extra` appended as its own paragraph, unless it is one already: a settling round that sees the
 * content again (with this and other paragraphs appended after it) adds nothing.
 */
export const appendOnce = (content: string, extra: string): string =>
  `\n\n${content}\n\n`.includes(`\n\n${extra}\n\n`) ? content : content === "" ? extra : `${content}\n\n${extra}`

const tellAllowed = (said: Said, options: MapOptions, log: Array<string>) => {
  if (said.allowed === undefined) return
  log.push(
    `${options.label}: ${said.allowed}: it lifts nothing here (an extension may veto, never permit; the policy and the other extensions still decide)`
  )
}

/** Our reply to `event` after the hook ran once on it. `tool` is the call, for tool events. */
export const mapRun = (event: string, tool: ToolPart | undefined, run: HookRun, options: MapOptions): Mapped => {
  const log: Array<string> = []
  const said = interpret(run, event, tool?.peerTool, options, log)
  if (said.failed !== undefined) {
    // An answer that failed in part (a value the peer does not know beside a block, an ask or a rewrite) keeps
    // what it did say, with a note: `failed` would drop it, and a block, an ask or a redaction must not be lost.
    const changed = said.level !== "none" || said.input !== undefined || said.replaceContent !== undefined
    if (!changed && said.appendContent.length === 0) {
      tellAllowed(said, options, log)
      return { reply: { failed: failedWhy(said.failed) }, log }
    }
    said.notes.push(`hook failed: ${said.failed}; the rest of its answer stands (use --fail-closed to block)`)
  }
  const reply: Record<string, unknown> = {}
  if (event === "tool_call" && tool !== undefined) {
    if (said.level === "block") {
      reply["block"] = true
      reply["reason"] = joinReasons(said.reasons)
      return { reply, log }
    }
    if (said.level === "ask") {
      reply["ask"] = true
      reply["reason"] = joinReasons(said.reasons)
    }
    if (said.input !== undefined) {
      const peerArgs =
        options.format === "gemini" ? { ...argsToPeer(tool.peerTool, tool.args), ...said.input } : said.input
      reply["args"] = argsFromPeer(tool.peerTool, peerArgs, tool.args)
    }
  } else if (event === "tool_result" && tool !== undefined) {
    let content = tool.content
    let isError = false
    if (said.replaceContent !== undefined) content = said.replaceContent
    if (said.level !== "none") {
      isError = true
      const why = joinReasons(said.reasons)
      // Gemini hides the output behind the reason; Claude shows the reason after the output.
      content = options.format === "gemini" ? why : appendOnce(content, why)
    }
    for (const extra of said.appendContent) content = appendOnce(content, extra)
    if (content !== tool.content) reply["content"] = content
    if (isError) reply["is_error"] = true
  } else if (said.level !== "none") {
    log.push(
      `${options.label}: a block on ${event} has no counterpart here (not a tool event); ignored: ${joinReasons(said.reasons)}`
    )
  }
  // Kept in the reply (and so in the audit record), and said on stderr (`tellAllowed`): a hook's author who expects
  // the allow to permit the call must be able to see that it did not. Only a tool_call reply has a `reason`; in
  // any other it would be a field of another event.
  tellAllowed(said, options, log)
  if (event === "tool_call" && said.notes.length > 0 && reply["reason"] === undefined)
    reply["reason"] = said.notes.join("; ")
  return { reply, log }
}
