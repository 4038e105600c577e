import { type EventName, isJsonObject } from "@abhed/protocol"
import { Result } from "effect"
import { type HookFormat, ourEvent, peerEvents } from "./HookFormat.ts"
import { parseMatcher } from "./HookMatcher.ts"
import { matcherWarning } from "./HookMatcherCheck.ts"
import { timeoutOf } from "./HookTimeout.ts"
import { parsePeerFile } from "../PeerFileText.ts"

/**
 * `import-hooks`: a Claude Code or Gemini CLI `settings.json` read as a list of command hooks, and every entry that
 * cannot be carried over with the reason (HookConfig.ts writes the `abhed.json` that runs them). Pure: the caller
 * reads the file.
 *
 * Both peers write `{"hooks": {"<Event>": [{"matcher": "…", "hooks": [{"type": "command", "command": "…",
 * "timeout": N}]}]}}`. Claude's `timeout` is in seconds, Gemini's in milliseconds.
 */

export interface SettingsHook {
  /** Where it is in the file: `hooks.PreToolUse[0].hooks[1]`. */
  readonly where: string
  readonly peerEvent: string
  readonly event: EventName
  readonly matcher: string | undefined
  /** A shell command line, as the peer runs it. */
  readonly command: string
  readonly timeoutMs: number | undefined
}

export interface Skipped {
  readonly where: string
  readonly why: string
}

export interface SettingsHooks {
  readonly format: HookFormat
  readonly hooks: ReadonlyArray<SettingsHook>
  readonly skipped: ReadonlyArray<Skipped>
  /** Carried over, but not all of it: what differs. */
  readonly warnings: ReadonlyArray<Skipped>
  /** Settings of the file, not of one hook, that do not carry over (a switch that turns hooks off). */
  readonly switches?: ReadonlyArray<Skipped>
}

/** Events only Claude Code has (`Notification`, `SessionStart`, `SessionEnd` are both peers': they tell nothing). */
const claudeOnly = new Set([
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
  "PreCompact"
])
const geminiOnly = new Set([
  "BeforeTool",
  "AfterTool",
  "BeforeAgent",
  "AfterAgent",
  "BeforeModel",
  "AfterModel",
  "BeforeToolSelection",
  "PreCompress"
])

/** Gemini keeps switches beside the events in its `hooks` object; they are not hooks. */
const geminiSwitches = new Set(["enabled", "disabled", "notifications"])

/** Whose settings these are, from the event names in them (Claude's when nothing tells). */
export const detectFormat = (settings: unknown): HookFormat => {
  const hooks = isJsonObject(settings) && isJsonObject(settings["hooks"]) ? settings["hooks"] : {}
  const events = Object.keys(hooks)
  if (events.some((e) => geminiOnly.has(e)) && !events.some((e) => claudeOnly.has(e))) return "gemini"
  return "claude"
}

/** The text of a settings file, read as its CLI reads it (PeerFileText.ts); the format is `format`, or told. */
export const parseSettings = (
  text: string,
  format: HookFormat | undefined
): Result.Result<{ readonly format: HookFormat; readonly settings: unknown }, string> =>
  parsePeerFile(text, format, detectFormat, "Claude Code reads settings.json as plain JSON: no comments")

/** The events a matcher filters by tool (on the others it filters a source or trigger we do not have). */
export const isToolEvent = (event: EventName): boolean => event === "tool_call" || event === "tool_result"

const why = (peerEvent: string, format: HookFormat): string =>
  `${peerEvent} has no counterpart here (supported: ${peerEvents(format).join(", ")})`

/**
 * The switches that keep hooks from running in the peer (Claude's `disableAllHooks`, Gemini's `hooks.enabled: false`
 * and `hooks.disabled`): not carried over, every hook is, and runs here. Said, so that a hook the user turned off
 * does not run without a word.
 */
const disabling = (settings: Readonly<Record<string, unknown>>, all: Readonly<Record<string, unknown>>) => {
  const found: Array<Skipped> = []
  const runAnyway = "not carried over: every hook of the file is, and runs; remove from the config what you keep off"
  if (settings["disableAllHooks"] === true) found.push({ where: "disableAllHooks", why: `true, ${runAnyway}` })
  if (all["enabled"] === false) found.push({ where: "hooks.enabled", why: `false, ${runAnyway}` })
  if (Array.isArray(all["disabled"]) && all["disabled"].length > 0) {
    const names = JSON.stringify(all["disabled"]).slice(0, 200)
    found.push({ where: "hooks.disabled", why: `${names}, ${runAnyway}` })
  }
  return found
}

/** Every command hook of the file, and every entry that cannot be carried over, with the reason. */
export const readSettings = (format: HookFormat, settings: unknown): Result.Result<SettingsHooks, string> => {
  if (!isJsonObject(settings)) return Result.fail("expected a JSON object (a settings.json)")
  const all = settings["hooks"]
  if (all === undefined) return Result.succeed({ format, hooks: [], skipped: [], warnings: [] })
  if (!isJsonObject(all)) return Result.fail("hooks: expected an object of events")
  const hooks: Array<SettingsHook> = []
  const seen = new Map<string, string>()
  const skipped: Array<Skipped> = []
  const warnings: Array<Skipped> = []
  for (const [peerEvent, groups] of Object.entries(all)) {
    const at = `hooks.${peerEvent}`
    if (format === "gemini" && geminiSwitches.has(peerEvent)) continue
    if (!Array.isArray(groups)) {
      skipped.push({ where: at, why: "expected an array of matcher groups" })
      continue
    }
    const event = ourEvent(format, peerEvent)
    for (const [g, group] of groups.entries()) {
      const gAt = `${at}[${g}]`
      if (!isJsonObject(group) || !Array.isArray(group["hooks"])) {
        skipped.push({ where: gAt, why: 'expected {"matcher": …, "hooks": [...]}' })
        continue
      }
      const matcher = typeof group["matcher"] === "string" ? group["matcher"] : undefined
      for (const [h, entry] of group["hooks"].entries()) {
        const where = `${gAt}.hooks[${h}]`
        if (!isJsonObject(entry)) {
          skipped.push({ where, why: "expected a hook object" })
          continue
        }
        const type = entry["type"]
        const command = entry["command"]
        const label = typeof command === "string" ? ` (${command})` : ""
        if (event === undefined) {
          skipped.push({ where: `${where}${label}`, why: why(peerEvent, format) })
          continue
        }
        if (type !== "command") {
          skipped.push({
            where: `${where}${label}`,
            why: `a ${typeof type === "string" ? type : "typeless"} hook is not a command: only command hooks can run as extensions`
          })
          continue
        }
        if (typeof command !== "string" || command.trim() === "") {
          skipped.push({ where, why: "a command hook without a command" })
          continue
        }
        if (entry["async"] === true) {
          skipped.push({
            where: `${where}${label}`,
            why: "an async hook runs in the background and cannot block or rewrite anything in its own agent; carried over it would"
          })
          continue
        }
        if (typeof entry["shell"] === "string" && !/^(bash|sh)$/.test(entry["shell"])) {
          skipped.push({
            where: `${where}${label}`,
            why: `it runs in ${entry["shell"]}; carried-over hooks run with bash -c`
          })
          continue
        }
        if (entry["if"] !== undefined) {
          warnings.push({
            where: `${where}${label}`,
            why: `its "if" condition ${JSON.stringify(entry["if"])} is not carried over: the hook runs on every call its matcher matches`
          })
        }
        if (isToolEvent(event) && Result.isFailure(parseMatcher(format, matcher))) {
          skipped.push({
            where: `${where}${label}`,
            why: `matcher ${JSON.stringify(matcher)} is not a valid regular expression`
          })
          continue
        }
        // Both peers run one command once per event, however often it is listed for the same matcher: so does the
        // config (two adapters would run it twice, side effects and all).
        const key = JSON.stringify([event, matcher ?? "", command])
        const first = seen.get(key)
        if (first !== undefined) {
          skipped.push({ where: `${where}${label}`, why: `the same command and matcher as ${first}: it runs once` })
          continue
        }
        seen.set(key, where)
        const matcherNote = isToolEvent(event) ? matcherWarning(format, matcher) : undefined
        if (matcherNote !== undefined) warnings.push({ where: `${where}${label}`, why: matcherNote })
        if (!isToolEvent(event) && matcher !== undefined && matcher.trim() !== "" && matcher.trim() !== "*") {
          // SessionStart's "resume", PreCompact's "manual": a source or trigger we do not have (ours are "startup",
          // "auto").
          warnings.push({
            where: `${where}${label}`,
            why:
              `its matcher ${JSON.stringify(matcher)} is not carried over (on ${peerEvent} it filters the source or ` +
              `trigger, which has no counterpart here): the hook runs on every ${event}`
          })
        }
        if (format === "gemini" && entry["env"] !== undefined) {
          // Names only: a value may be a token.
          const names = isJsonObject(entry["env"]) ? Object.keys(entry["env"]).join(", ") : "not an object"
          warnings.push({
            where: `${where}${label}`,
            why:
              `its env (${names}) is not carried over: the hook runs with the extension's environment; ` +
              `set what it needs in the extension's "env"`
          })
        }
        if (group["matcher"] !== undefined && matcher === undefined) {
          // The peers take a string: an object or a list here is no matcher at all, so the hook runs on everything.
          warnings.push({
            where: `${where}${label}`,
            why: `its matcher ${JSON.stringify(group["matcher"]).slice(0, 80)} is not a string: the hook runs on every ${event}; write the names as one string ("Edit|Write")`
          })
        }
        const timeout = timeoutOf(format, entry["timeout"])
        if (timeout.adjusted !== undefined) warnings.push({ where: `${where}${label}`, why: timeout.adjusted })
        if (entry["timeout"] !== undefined && timeout.ms === undefined) {
          warnings.push({
            where: `${where}${label}`,
            why: `its timeout ${JSON.stringify(entry["timeout"]).slice(0, 40)} is not a positive number: the adapter's default bound applies`
          })
        }
        hooks.push({ where, peerEvent, event, matcher, command, timeoutMs: timeout.ms })
      }
    }
  }
  return Result.succeed({ format, hooks, skipped, warnings, switches: disabling(settings, all) })
}
