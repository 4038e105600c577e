import { Defaults, type EventName, isJsonObject, MaxTimerMs } from "@abhed/protocol"
import { readConfigText } from "@abhed/protocol/ConfigText"
import { Result } from "effect"
import { type HookFormat, ourEvent, peerEvents } from "./HookFormat.ts"
import { parseMatcher } from "./HookMatcher.ts"
import { toolNames } from "./HookToolNames.ts"

/**
 * `import-hooks`: a Claude Code or Gemini CLI `settings.json` read as a list of command hooks, and the `abhed.json`
 * that runs each one through `abhed-ext hook`. Pure: the caller reads the file and says how to start the adapter.
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
}

const claudeOnly = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "Notification"])
const geminiOnly = new Set(["BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel", "BeforeToolSelection", "PreCompress"])

/** Gemini keeps switches beside the events in its `hooks` object; they are not hooks. */
const geminiSwitches = new Set(["enabled", "disabled", "notifications"])

/** Whose settings these are, from the event names in them (Claude's when nothing tells). */
export const detectFormat = (settings: unknown): HookFormat => {
  const hooks = isJsonObject(settings) && isJsonObject(settings["hooks"]) ? settings["hooks"] : {}
  const events = Object.keys(hooks)
  if (events.some((e) => geminiOnly.has(e)) && !events.some((e) => claudeOnly.has(e))) return "gemini"
  return "claude"
}

/**
 * The text of a settings file. Claude Code reads its settings.json as JSON; Gemini CLI strips `//` and `/* *\/`
 * comments first (strip-json-comments, then JSON.parse: a trailing comma is still an error), so a Gemini file may
 * have comments. The JSONC reader of abhed.json reads them, with the line and column of each problem. The format is
 * `format`, or told by the event names.
 */
export const parseSettings = (
  text: string,
  format: HookFormat | undefined
): Result.Result<{ readonly format: HookFormat; readonly settings: unknown }, string> => {
  let strictError: string
  try {
    const settings: unknown = JSON.parse(text)
    return Result.succeed({ format: format ?? detectFormat(settings), settings })
  } catch (e) {
    strictError = `not JSON: ${e instanceof Error ? e.message : String(e)}`
  }
  const read = readConfigText(text)
  const chosen = format ?? (read.value === undefined ? undefined : detectFormat(read.value))
  if (chosen !== "gemini") {
    return Result.fail(read.value === undefined ? strictError : `${strictError} (Claude Code reads settings.json as plain JSON: no comments)`)
  }
  const [problem] = read.problems
  if (problem === undefined) return Result.succeed({ format: chosen, settings: read.value })
  const { column, line } = read.where(problem.offset)
  // The reader words a trailing comma for abhed.json; here it is Gemini CLI that refuses it.
  const message = problem.message.startsWith("trailing comma")
    ? "trailing comma (Gemini CLI reads comments, not trailing commas): remove it"
    : problem.message
  return Result.fail(`not JSON with comments: line ${line}, column ${column}: ${message}`)
}

/** Slack between the hook's own bound and the extension's, for the adapter's round trip and the spawn. */
const ExtensionSlackMs = 1000
/** The extension's `startup_timeout_ms` is the hook's bound plus this (the first exchange also starts Node). */
const StartupSlackMs = 5 * ExtensionSlackMs

/**
 * The longest `--timeout-ms` import-hooks writes: about 24.8 days, "forever" in practice. It leaves room for the
 * slack above, so that the extension's `timeout_ms` and `startup_timeout_ms` stay within what a timer can wait
 * (HookRunner.ts), which is also the most `run` accepts for them.
 */
export const MaxHookTimeoutMs = MaxTimerMs - StartupSlackMs

/**
 * A hook's `timeout` (Claude: seconds, Gemini: milliseconds) in whole milliseconds the adapter accepts: at least 1
 * (a `--timeout-ms 0` is refused, and the guard would never run) and at most `MaxHookTimeoutMs`. `adjusted` says
 * when it is not the peer's own figure.
 */
const timeoutOf = (format: HookFormat, timeout: unknown): { readonly ms: number | undefined; readonly adjusted?: string } => {
  if (typeof timeout !== "number" || !(timeout > 0)) return { ms: undefined }
  const given = `its timeout of ${timeout} ${format === "claude" ? "s" : "ms"}`
  const exact = format === "claude" ? timeout * 1000 : timeout
  if (exact > MaxHookTimeoutMs) {
    return { ms: MaxHookTimeoutMs, adjusted: `${given} is longer than a timer can wait: clamped to ${MaxHookTimeoutMs} ms (about 24.8 days, "forever")` }
  }
  const ms = Math.round(exact)
  return ms >= 1 ? { ms } : { ms: 1, adjusted: `${given} is under 1 ms: rounded up to 1 ms` }
}

/** The events a matcher filters by tool (on the others it filters a source or trigger we do not have). */
const isToolEvent = (event: EventName): boolean => event === "tool_call" || event === "tool_result"

const why = (peerEvent: string, format: HookFormat): string =>
  `${peerEvent} has no counterpart here (supported: ${peerEvents(format).join(", ")})`

/** Every command hook of the file, and every entry that cannot be carried over, with the reason. */
export const readSettings = (format: HookFormat, settings: unknown): Result.Result<SettingsHooks, string> => {
  if (!isJsonObject(settings)) return Result.fail("expected a JSON object (a settings.json)")
  const all = settings["hooks"]
  if (all === undefined) return Result.succeed({ format, hooks: [], skipped: [], warnings: [] })
  if (!isJsonObject(all)) return Result.fail("hooks: expected an object of events")
  const hooks: Array<SettingsHook> = []
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
        skipped.push({ where: gAt, why: "expected {\"matcher\": …, \"hooks\": [...]}" })
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
          skipped.push({ where: `${where}${label}`, why: `it runs in ${entry["shell"]}; carried-over hooks run with bash -c` })
          continue
        }
        if (entry["if"] !== undefined) {
          warnings.push({
            where: `${where}${label}`,
            why: `its "if" condition ${JSON.stringify(entry["if"])} is not carried over: the hook runs on every call its matcher matches`
          })
        }
        if (isToolEvent(event) && Result.isFailure(parseMatcher(format, matcher))) {
          skipped.push({ where: `${where}${label}`, why: `matcher ${JSON.stringify(matcher)} is not a valid regular expression` })
          continue
        }
        if (!isToolEvent(event) && matcher !== undefined && matcher.trim() !== "" && matcher.trim() !== "*") {
          // SessionStart's "resume", PreCompact's "manual": a source or trigger we do not have (ours are "startup", "auto").
          warnings.push({
            where: `${where}${label}`,
            why: `its matcher ${JSON.stringify(matcher)} is not carried over (on ${peerEvent} it filters the source or ` +
              `trigger, which has no counterpart here): the hook runs on every ${event}`
          })
        }
        if (format === "gemini" && entry["env"] !== undefined) {
          // Names only: a value may be a token.
          const names = isJsonObject(entry["env"]) ? Object.keys(entry["env"]).join(", ") : "not an object"
          warnings.push({
            where: `${where}${label}`,
            why: `its env (${names}) is not carried over: the hook runs with the extension's environment; ` +
              `set what it needs in the extension's "env"`
          })
        }
        const timeout = timeoutOf(format, entry["timeout"])
        if (timeout.adjusted !== undefined) warnings.push({ where: `${where}${label}`, why: timeout.adjusted })
        hooks.push({ where, peerEvent, event, matcher, command, timeoutMs: timeout.ms })
      }
    }
  }
  return Result.succeed({ format, hooks, skipped, warnings })
}

/** How the generated config starts the adapter: `abhed-ext` (from PATH), or e.g. `node /…/bin.ts`, then `hook …`. */
export interface AdapterLaunch {
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** A name for the extension: unique (by position), readable (the event and the script's name). */
const nameOf = (hook: SettingsHook, index: number): string => {
  const words = hook.command.split(/\s+/).map((w) => w.replace(/^["']|["']$/g, ""))
  const script = words.find((w) => /\.(py|sh|js|mjs|ts|rb|pl)$/.test(w)) ?? words[0] ?? "hook"
  const base = (script.split("/").pop() ?? "hook").replace(/\.[A-Za-z0-9]+$/, "")
  const slug = base.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[^a-z0-9]+|-+$/g, "").slice(0, 40)
  return `${hook.peerEvent.toLowerCase()}-${index + 1}${slug === "" ? "" : `-${slug}`}`
}

/**
 * The `match` rules for a peer matcher that is only exact names (Claude's `Bash`, `Edit|Write`): the host then
 * skips the adapter for other calls without a round trip. They cover every call the adapter's matcher accepts: each
 * of our tool names the adapter shows the hook as a matched name, which is the table's name (`bash` for `Bash`) and,
 * when the name is not one of ours in the table, the name itself (a tool called `Bash`, passed through as it is).
 * None when nothing would be covered (the adapter then decides alone). A regex stays with the adapter (`--matcher`).
 */
const matchRules = (format: HookFormat, hook: SettingsHook) => {
  if (!isToolEvent(hook.event)) return undefined
  const parsed = parseMatcher(format, hook.matcher)
  if (Result.isFailure(parsed) || parsed.success._tag !== "Names") return undefined
  const names = toolNames(format)
  const ours = new Set<string>()
  for (const peer of parsed.success.names) {
    for (const [our, theirs] of names.toPeer) if (theirs === peer) ours.add(our)
    if (!names.toPeer.has(peer)) ours.add(peer)
  }
  return ours.size === 0 ? undefined : [...ours].map((tool) => ({ tool }))
}

/**
 * Rounds enough for every imported hook of one event to have its rewrite adopted. A round adopts one proposal (the
 * lowest-named; docs/design.md#combination), so N hooks that each append (Claude's `additionalContext`, Gemini's merged
 * `tool_input`) settle in N + 1 rounds; past `max_rewrite_rounds` the call is denied or the result withheld. The
 * peers apply every hook's change in one go: the imported config must not fail where they succeed.
 */
const roundsFor = (hooks: ReadonlyArray<SettingsHook>): number | undefined => {
  const perEvent = new Map<string, number>()
  for (const hook of hooks) perEvent.set(hook.event, (perEvent.get(hook.event) ?? 0) + 1)
  const needed = Math.max(0, ...perEvent.values()) + 1
  return needed > Defaults.max_rewrite_rounds ? needed : undefined
}

/** Where editors find the JSON Schema of abhed.json (docs/abhed.schema.json in the repository). */
export const ConfigSchemaUrl = "https://raw.githubusercontent.com/abhed/abhed-extensions/main/docs/abhed.schema.json"

/**
 * One adapter extension per hook. `cwd`: the project folder the hooks expect to run in, relative to the config
 * file's folder (as the host resolves it), so that the config can be committed.
 */
export const toConfig = (
  imported: SettingsHooks,
  launch: AdapterLaunch,
  cwd: string
): { readonly $schema: string; readonly max_rewrite_rounds?: number; readonly extensions: ReadonlyArray<Record<string, unknown>> } => {
  const rounds = roundsFor(imported.hooks)
  return {
    $schema: ConfigSchemaUrl,
    ...(rounds === undefined ? {} : { max_rewrite_rounds: rounds }),
    extensions: extensionsOf(imported, launch, cwd)
  }
}

/**
 * What an imported hook gets that differs from the peer, whatever the file says (the per-hook differences are
 * `warnings`): said on stderr, so that a hook that needs `$GUARD_TOKEN` or 30 s is not lost without a word.
 */
export const importNotes = (imported: SettingsHooks, defaultTimeoutMs: number): Array<string> => {
  if (imported.hooks.length === 0) return []
  const untimed = imported.hooks.filter((h) => h.timeoutMs === undefined).map((h) => h.where)
  return [
    ...(untimed.length === 0 ? [] : [
      `timeouts: ${untimed.join(", ")} set no timeout: each run is bounded by the adapter's ${defaultTimeoutMs} ms ` +
      `(the peer's default is 60 s) and killed past it; add --timeout-ms=N to the extension's args (and raise its timeout_ms) for more`
    ]),
    ...(imported.hooks.length === untimed.length ? [] : ["timeouts: a hook's own timeout is carried over as --timeout-ms, and the extension's timeout_ms is 1 s above it"]),
    "environment: hooks run with the extension's environment, not your shell's: a baseline (PATH, HOME, USER, " +
    `LANG, TMPDIR, …) and ${imported.format === "gemini" ? "GEMINI_PROJECT_DIR, " : ""}CLAUDE_PROJECT_DIR; a variable a hook needs (a token) must be named in the extension's ` +
    "env_passthrough or set in its env, else the hook runs without it",
    "failures: without --fail-closed, a hook that fails (an exit code other than 0 and 2, a timeout, a crash) is no " +
    "opinion, as in the peers; add --fail-closed to the extension's args to block the call instead"
  ]
}

const extensionsOf = (imported: SettingsHooks, launch: AdapterLaunch, cwd: string): Array<Record<string, unknown>> =>
  imported.hooks.map((hook, i) => {
    // `--flag=value`: a value is never read as a flag (a matcher `-?Bash` after `--matcher` would be).
    const flags = [`--format=${imported.format}`]
    if (isToolEvent(hook.event) && hook.matcher !== undefined && hook.matcher !== "" && hook.matcher !== "*") flags.push(`--matcher=${hook.matcher}`)
    if (hook.timeoutMs !== undefined) flags.push(`--timeout-ms=${hook.timeoutMs}`)
    const match = matchRules(imported.format, hook)
    const extension: Record<string, unknown> = {
      name: nameOf(hook, i),
      command: launch.command,
      args: [...launch.args, "hook", ...flags, "--", "bash", "-c", hook.command],
      events: [hook.event],
      cwd,
      // The adapter echoes every request's id, so a stray line can never pass for a reply.
      reply_ids: "required"
    }
    if (hook.timeoutMs !== undefined) {
      extension["timeout_ms"] = hook.timeoutMs + ExtensionSlackMs
      extension["startup_timeout_ms"] = Math.max(10_000, hook.timeoutMs + StartupSlackMs)
    }
    if (match !== undefined) extension["match"] = match
    return extension
  })
