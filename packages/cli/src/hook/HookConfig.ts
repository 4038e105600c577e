import { Defaults } from "@abhed/protocol"
import { Result } from "effect"
import type { HookFormat } from "./HookFormat.ts"
import { parseMatcher } from "./HookMatcher.ts"
import { isToolEvent, type SettingsHook, type SettingsHooks } from "./HookSettings.ts"
import { quoteProjectDir } from "./HookCommandLine.ts"
import { ExtensionSlackMs, StartupSlackMs } from "./HookTimeout.ts"
import { toolNames } from "./HookToolNames.ts"

/**
 * `import-hooks`: the `abhed.json` that runs each hook read from a settings file (HookSettings.ts) through
 * `abhed-ext hook`, and what the user is told about it. Pure: the caller says how to start the adapter.
 */

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
  const slug = base
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+|-+$/g, "")
    .slice(0, 40)
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
): {
  readonly $schema: string
  readonly max_rewrite_rounds?: number
  readonly extensions: ReadonlyArray<Record<string, unknown>>
} => {
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
    ...(untimed.length === 0
      ? []
      : [
          `timeouts: ${untimed.join(", ")} set no timeout: each run is bounded by the adapter's ${defaultTimeoutMs} ms ` +
            `(the peer's default is 60 s) and killed past it; add --timeout-ms=N to the extension's args (and raise its timeout_ms) for more`
        ]),
    ...(imported.hooks.length === untimed.length
      ? []
      : [
          "timeouts: a hook's own timeout is carried over as --timeout-ms, and the extension's timeout_ms is 1 s above it"
        ]),
    "environment: hooks run with the extension's environment, not your shell's: a baseline (PATH, HOME, USER, " +
      `LANG, TMPDIR, …) and ${imported.format === "gemini" ? "GEMINI_PROJECT_DIR, " : ""}CLAUDE_PROJECT_DIR; a variable a hook needs (a token) must be named in the extension's ` +
      "env_passthrough or set in its env, else the hook runs without it",
    "failures: without --fail-closed, a hook that fails (an exit code other than 0 and 2, a timeout, a crash) is left " +
      'to the extension\'s on_failure: no opinion by default, as in the peers; set its on_failure to "deny", or add ' +
      "--fail-closed to its args, to block the call instead"
  ]
}

const extensionsOf = (imported: SettingsHooks, launch: AdapterLaunch, cwd: string): Array<Record<string, unknown>> =>
  imported.hooks.map((hook, i) => {
    // `--flag=value`: a value is never read as a flag (a matcher `-?Bash` after `--matcher` would be).
    const flags = [`--format=${imported.format}`]
    if (isToolEvent(hook.event) && hook.matcher !== undefined && hook.matcher !== "" && hook.matcher !== "*")
      flags.push(`--matcher=${hook.matcher}`)
    if (hook.timeoutMs !== undefined) flags.push(`--timeout-ms=${hook.timeoutMs}`)
    const match = matchRules(imported.format, hook)
    const extension: Record<string, unknown> = {
      name: nameOf(hook, i),
      command: launch.command,
      args: [
        ...launch.args,
        "hook",
        ...flags,
        "--",
        "bash",
        "-c",
        imported.format === "gemini" ? quoteProjectDir(hook.command) : hook.command
      ],
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
