import type { AuditContent } from "@abhed/host/AuditContent"
import { AuditLog } from "@abhed/host/AuditLog"
import { ExtensionHost, type ExtensionHostShape } from "@abhed/host/ExtensionHost"
import * as TelemetryConfig from "@abhed/host/TelemetryConfig"
import type { Config } from "@abhed/protocol"
import { Console, Context, Deferred, Effect, Layer, Option, Stream } from "effect"
import { Command } from "effect/cli"
import { OutputUnwritable, StrictRunFailed } from "../CliError.ts"
import { StdinConfig } from "../ConfigFile.ts"
import { inputLines } from "../Input.ts"
import { type RunSource, runSource } from "../Layers.ts"
import { jsonText } from "../JsonText.ts"
import { render } from "../Output.ts"
import { auditClash } from "./AuditClash.ts"
import { mcpEntryWarnings } from "../mcp/McpEntryTimeouts.ts"
import { configAsEvents } from "./ConfigAsEvents.ts"
import * as RunSummary from "./RunSummary.ts"
import { loadWatchable, watchRun } from "./RunWatch.ts"
import { runSession } from "./Session.ts"
import { failUsage } from "../Usage.ts"
import type { flags } from "./RunCommand.ts"

/** The JSONL audit sink; a file it cannot open is one line on stderr and exit 1, not a stack trace. */
const auditLayer = (file: string, content: AuditContent) =>
  AuditLog.layerJsonl(file, { content }).pipe(
    Layer.catchTag("AuditWriteError", (e) =>
      Layer.effect(AuditLog, Effect.fail(new OutputUnwritable({ file, detail: e.detail })))
    ),
    Layer.tapError((e) => Console.error(e.message))
  )

/** What the audit sink could not write, once the session is over. */
const unwrittenRecords = Effect.gen(function* () {
  const log = yield* AuditLog
  return log.unwritten === undefined ? undefined : yield* log.unwritten
})

/**
 * OpenTelemetry export when the standard variables name a collector (docs/observability.md); each bad value is a
 * warning that names the variable, and the run goes on. The exporters are loaded only then: most runs export nothing.
 */
const telemetryLayer = Effect.map(
  Effect.sync(() => TelemetryConfig.fromEnv(process.env)),
  ({ settings, warnings }) => ({
    warnings,
    layer:
      settings === undefined
        ? Layer.empty
        : Layer.unwrap(
            Effect.promise(() => import("@abhed/host/Telemetry")).pipe(
              Effect.map((Telemetry) => Telemetry.layer(settings))
            )
          )
  })
)

/**
 * A word where silence would mislead: a config without extensions lets every call through unvetted; a terminal on
 * stdin would otherwise sit there looking hung.
 */
const startNotes = (file: string, config: Config, events: Option.Option<string>) =>
  Effect.gen(function* () {
    if (config.extensions.length === 0) {
      yield* Console.error(
        `abhed-ext run: warning: ${file} configures no extensions: nothing can veto a call, the policy alone ` +
          `decides (default: ${config.policy.default})`
      )
    }
    for (const warning of mcpEntryWarnings(config.extensions))
      yield* Console.error(`abhed-ext run: warning: ${warning}`)
    if (Option.getOrElse(events, () => "-") === "-" && process.stdin.isTTY === true) {
      yield* Console.error("abhed-ext run: reading events from stdin, one JSON request per line (Ctrl-D to end)")
    }
  })

/**
 * The output line as printed: JSON whose only line break is the `\n` that ends it (JsonText.ts: U+2028, U+2029 and
 * U+0085 written as escapes, so a reader that also splits lines on them, Python's `str.splitlines` or an editor, still
 * sees one line per decision), and nothing in it a terminal would obey (an extension's reason is its own words).
 */
const printed = (output: Parameters<typeof render>[0]): string => jsonText(render(output))

/** What `abhed-ext run` does once its flags are parsed (RunCommand.ts). */
export const runMain = Effect.fn("run")(function* ({
  audit,
  auditContent,
  config,
  events,
  sessionId,
  strict,
  summary,
  watch
}: Command.Command.Config.Infer<typeof flags>) {
  if (Option.getOrUndefined(config) === StdinConfig && Option.getOrElse(events, () => "-") === "-") {
    // One stdin cannot carry both: the config would swallow the requests.
    return yield* failUsage(
      ["abhed-ext", "run"],
      "--config - reads the config from stdin, so the events must come from a file (EVENTS.jsonl)"
    )
  }
  const eventsFile = Option.getOrElse(events, () => "-")
  const asEvents = eventsFile === "-" ? undefined : configAsEvents(eventsFile, Option.isSome(config))
  if (asEvents !== undefined) return yield* failUsage(["abhed-ext", "run"], asEvents)
  const clash = Option.isSome(audit)
    ? yield* auditClash(audit.value, eventsFile, Option.getOrUndefined(config))
    : undefined
  if (clash !== undefined) return yield* failUsage(["abhed-ext", "run"], clash)
  if (watch && Option.getOrUndefined(config) === StdinConfig) {
    return yield* failUsage(["abhed-ext", "run"], "--watch watches the config's file: --config - (stdin) has none")
  }
  // No --config: the layers of where it stands (the project's only if trusted); --config FILE: that file alone.
  const first = watch ? yield* loadWatchable(config) : undefined
  let loaded = first?.source ?? (yield* runSource(config))
  yield* startNotes(loaded.label, loaded.config, events)
  let ended = false
  const lines = (yield* inputLines(events)).pipe(Stream.ensuring(Effect.sync(() => (ended = true))))
  const tally = summary || strict ? RunSummary.make(loaded.config) : undefined
  const telemetry = yield* telemetryLayer
  for (const w of telemetry.warnings) yield* Console.error(`abhed-ext run: warning: ${w}`)
  // Whether the session has begun starting its host, and the host once it has started.
  let begun = false
  const live = Deferred.makeUnsafe<ExtensionHostShape>()
  const session = runSession({
    lines,
    // The source as last loaded: with --watch, a change before the first request is what the session starts with.
    host: (id) => {
      begun = true
      return Layer.provide(loaded.host(id), RunSummary.tee(tally)).pipe(
        Layer.tap((context) => Deferred.succeed(live, Context.get(context, ExtensionHost)))
      )
    },
    defaultSessionId: "abhed-ext",
    sessionId: Option.getOrUndefined(sessionId),
    onLine: (r) => Effect.andThen(RunSummary.addLine(tally, r), Console.log(printed(r.output)))
  })
  // With --watch, the watcher lives as long as the session, and reloads the host once it has started.
  const reloaded = (source: RunSource) => {
    loaded = source
    RunSummary.track(tally, source.config)
  }
  const watching =
    first === undefined
      ? session
      : Effect.scoped(
          Effect.andThen(
            watchRun({
              config,
              first,
              adopt: (source) => {
                if (begun) return false
                reloaded(source)
                return true
              },
              host: live,
              ended: () => ended,
              loaded: reloaded
            }),
            session
          )
        )
  // Records the audit could not write (a full disk): every line was still decided; the exit code says so at the end.
  const unwritten = yield* Effect.andThen(watching, unwrittenRecords).pipe(
    Effect.provide(Option.isSome(audit) ? auditLayer(audit.value, auditContent) : AuditLog.layerNone),
    Effect.provide(telemetry.layer)
  )
  const auditLost =
    unwritten === undefined || Option.isNone(audit)
      ? undefined
      : new OutputUnwritable({
          file: audit.value,
          detail: `${unwritten.records} audit record${unwritten.records === 1 ? " was" : "s were"} not written (${unwritten.detail})`
        })
  if (auditLost !== undefined) yield* Console.error(auditLost.message)
  if (tally === undefined) return auditLost === undefined ? undefined : yield* auditLost
  if (summary) yield* Console.error(RunSummary.render(tally))
  const problems = [
    loaded.untrusted !== undefined ? `the project config ${loaded.untrusted.print.file} is not trusted` : undefined,
    RunSummary.strictProblem(tally)
  ].filter((p) => p !== undefined)
  const problem = strict && problems.length > 0 ? problems.join("; ") : undefined
  if (problem !== undefined) {
    const failed = new StrictRunFailed({ problem })
    yield* Console.error(failed.message)
    return yield* failed
  }
  if (auditLost !== undefined) return yield* auditLost
})
