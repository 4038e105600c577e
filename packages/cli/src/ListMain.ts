import { printable } from "@abhed/host/Printable"
import { AuditLog } from "@abhed/host/AuditLog"
import type { ExtensionStatus } from "@abhed/host/Extension"
import { describeDeathCauseWithStderr } from "@abhed/host/ExtensionError"
import { ExtensionHost } from "@abhed/host/ExtensionHost"
import { type EventName, EventNames, eventsOf, type ExtensionConfig } from "@abhed/protocol"
import { Console, Duration, Effect, Option } from "effect"
import { Command } from "effect/cli"
import { loadConfig } from "./ConfigFile.ts"
import { processHost } from "./HostLayer.ts"
import { layersHost, layersLabel, loadCliLayers } from "./Layers.ts"
import type { flags } from "./ListCommand.ts"
import { jsonLine } from "./JsonText.ts"

/**
 * `abhed-ext list -c abhed.json`: what the config sets up, and how it stands once started. Every extension is
 * started and probed as an agent would (`session_start`, `list_tools`), then closed (`session_end`).
 */

interface Listed {
  readonly name: string
  readonly command: ReadonlyArray<string>
  readonly cwd: string | null
  /** The events it receives (every event when the config names none). */
  readonly events: ReadonlyArray<EventName>
  readonly match: ReadonlyArray<{ readonly tool: string; readonly args: { readonly [arg: string]: string } }> | null
  readonly on_failure: string
  readonly timeout_ms: number
  readonly startup_timeout_ms: number
  readonly grace_ms: number
  /**
   * `live`: it answered the probe; `dead`: it died (`cause`); `running`: it takes neither `session_start` nor
   * `list_tools`, so nothing was asked of it, and it had not died by the end of the watch (`--watch-ms`).
   */
  readonly state: "live" | "dead" | "running"
  /** Why it died, when it did. */
  readonly cause: string | null
  /** The tools it declared that the host accepted. */
  readonly tools: ReadonlyArray<{ readonly name: string; readonly description: string }>
}

export interface Listing {
  readonly config: string
  readonly extensions: ReadonlyArray<Listed>
  /** Declarations the host rejected (a built-in's name, a duplicate, a bad name or schema), one line each. */
  readonly rejected_tools: ReadonlyArray<string>
  /**
   * Without `--config`: the project layer found but not trusted, whose extensions were not started (null when
   * there is none): its file, its extensions, what changed since it was trusted, and the command that trusts it.
   */
  readonly untrusted_project?: {
    readonly file: string
    readonly extensions: ReadonlyArray<string>
    readonly changes: ReadonlyArray<string>
    readonly trust: string
  } | null
}

const PollMillis = 50

/** Not yet asked anything, nor seen to die. */
const unasked = (status: ExtensionStatus): boolean => status.state._tag === "starting"

/**
 * The statuses once every extension nothing was asked of has died or `watchMs` has passed: `list` sends no request
 * they take, and an exit at startup is noticed by the host as it happens, not at once.
 */
const watch = (statuses: Effect.Effect<ReadonlyArray<ExtensionStatus>>, watchMs: number) =>
  Effect.gen(function* () {
    for (let waited = 0; ; waited += PollMillis) {
      const now = yield* statuses
      if (waited >= watchMs || !now.some(unasked)) return now
      yield* Effect.sleep(Duration.millis(PollMillis))
    }
  })

const stateOf = (
  status: ExtensionStatus | undefined
): { readonly state: Listed["state"]; readonly cause: string | null } =>
  status === undefined
    ? { state: "dead", cause: "not started" }
    : status.state._tag === "dead"
      ? { state: "dead", cause: describeDeathCauseWithStderr(status.state.cause) }
      : { state: status.state._tag === "live" ? "live" : "running", cause: null }

const listed = (
  config: ExtensionConfig,
  status: ExtensionStatus | undefined,
  tools: ReadonlyArray<{ readonly name: string; readonly description: string }>
): Listed => ({
  name: config.name,
  command: [config.command, ...config.args],
  cwd: config.cwd ?? null,
  events: eventsOf(config),
  match: config.match?.map((rule) => ({ tool: rule.tool, args: rule.args })) ?? null,
  on_failure: config.on_failure,
  timeout_ms: config.timeout_ms,
  startup_timeout_ms: config.startup_timeout_ms,
  grace_ms: config.grace_ms,
  ...stateOf(status),
  tools
})

/** The file `--config` names, or else the layers of where it stands (the project's only if trusted). */
const listSource = (config: Option.Option<string>) =>
  Option.isSome(config)
    ? Effect.map(loadConfig(config.value), (loaded) => ({
        label: config.value,
        config: loaded.config,
        host: processHost(loaded),
        untrusted: undefined as Listing["untrusted_project"]
      }))
    : Effect.map(loadCliLayers("abhed-ext list"), (layers) => ({
        label: layersLabel(layers),
        config: layers.config,
        host: layersHost(layers),
        untrusted:
          layers.untrusted === undefined
            ? null
            : {
                file: layers.untrusted.print.file,
                extensions: layers.untrusted.print.extensions.map((x) => x.name),
                changes: layers.untrusted.changes,
                trust: `abhed-ext trust ${layers.untrusted.print.root}`
              }
      }))

/** Start the config's extensions, probe them, close them: the listing. */
export const probe = (config: Option.Option<string>, watchMs: number) =>
  Effect.gen(function* () {
    const source = yield* listSource(config)
    return yield* Effect.gen(function* () {
      const host = yield* ExtensionHost
      const statuses = yield* watch(host.status, watchMs)
      const accepted = yield* host.tools
      const records = yield* (yield* AuditLog).entries
      const startupTools = records.find((r) => r.event === "list_tools")
      return {
        config: source.label,
        extensions: source.config.extensions.map((x) =>
          listed(
            x,
            statuses.find((s) => s.name === x.name),
            accepted
              .filter((t) => t.extension === x.name)
              .map((t) => ({ name: t.tool.name, description: t.tool.description }))
          )
        ),
        rejected_tools: startupTools?.notes.filter((note) => note.startsWith("tool ")) ?? [],
        ...(source.untrusted !== undefined ? { untrusted_project: source.untrusted } : {})
      } satisfies Listing
    }).pipe(Effect.provide(source.host("abhed-ext-list")), Effect.provide(AuditLog.layerMemory))
  })

const showRule = (rule: { readonly tool: string; readonly args: { readonly [arg: string]: string } }): string =>
  [rule.tool, ...Object.entries(rule.args).map(([arg, glob]) => `${arg}=${glob}`)].join(" ")

const quote = (word: string): string => (/^[\w./:=@%+-]+$/.test(word) ? word : JSON.stringify(word))

/** The listing for people. */
export const renderText = (listing: Listing): string => {
  const count = listing.extensions.length
  const lines = [
    `${listing.config}: ${count} extension${count === 1 ? "" : "s"}, started and probed (session_start, list_tools)`
  ]
  if (count === 0) lines.push("  none: nothing can veto a call, the policy alone decides")
  for (const x of listing.extensions) {
    const state =
      x.state === "dead"
        ? `DEAD: ${x.cause ?? "unknown"}`
        : x.state === "running"
          ? "running, not asked anything (it takes neither session_start nor list_tools)"
          : "live"
    lines.push(
      "",
      `${x.name}  ${state}`,
      `  command     ${x.command.map(quote).join(" ")}${x.cwd !== null ? `  (in ${x.cwd})` : ""}`,
      `  events      ${x.events.length === EventNames.length ? "all" : x.events.join(", ")}`,
      ...(x.match !== null ? [`  match       ${x.match.map(showRule).join("; ")}`] : []),
      `  on_failure  ${x.on_failure}`,
      `  timeouts    ${x.timeout_ms} ms per reply, ${x.startup_timeout_ms} ms for the first, ${x.grace_ms} ms grace at exit`,
      `  tools       ${x.tools.length === 0 ? "none" : x.tools.map((t) => t.name).join(", ")}`
    )
  }
  if (listing.rejected_tools.length > 0)
    lines.push("", "rejected tools:", ...listing.rejected_tools.map((note) => `  ${note}`))
  const u = listing.untrusted_project
  if (u !== undefined && u !== null) {
    lines.push(
      "",
      `NOT TRUSTED: the project config ${u.file}: its extensions are not started` +
        (u.extensions.length > 0 ? ` (${u.extensions.join(", ")})` : ""),
      ...u.changes.map((line) => `  ${line}`),
      `  review it and trust it with: ${u.trust}`
    )
  }
  // A repository's config (and what its extensions declare) is not ours: its escape sequences must not drive the
  // terminal (hide text after them, write the clipboard), so every line is shown escaped.
  return lines.map(printable).join("\n")
}

/** What `abhed-ext list` does once its flags are parsed (ListCommand.ts). */
export const listMain = Effect.fn("list")(function* ({
  config,
  json,
  watchMs
}: Command.Command.Config.Infer<typeof flags>) {
  const listing = yield* probe(config, watchMs)
  yield* Console.log(json ? jsonLine(listing) : renderText(listing))
})
