import type * as Telemetry from "@abhed/host/Telemetry"
import * as TelemetryConfig from "@abhed/host/TelemetryConfig"
import { requestTexts } from "@abhed/host/TelemetryQuotes"
import { bounded, reasonOf, verdictOf } from "@abhed/host/TelemetryRecord"
import { deferAttributes } from "@abhed/host/TelemetryTracer"
import { Context, Duration, Effect, Exit, Layer, Metric, Option, Tracer } from "effect"
import { basename } from "node:path"
import type { HookFormat } from "./HookFormat.ts"
import { peerEvent } from "./HookFormat.ts"
import type { Json, ToolPart } from "./HookInput.ts"
import type { HookRun } from "./HookRunner.ts"

/**
 * `abhed-ext hook` into OpenTelemetry, with the variables `run` reads (docs/observability.md): per run of the hook a
 * span `abhed.hook`, its count and latency as metrics, and a log record, all without content: the hook's command by
 * its name (never its arguments or environment), the tool by its name, how the run ended and what its answer
 * became. Nothing here waits: a run is recorded into the exporters' buffers after its answer is made, and the
 * adapter's exit sends what is left within `OTEL_EXPORTER_OTLP_TIMEOUT`.
 */

/** What one run of the hook was, as the adapter saw it. */
export interface ObservedRun {
  readonly request: Json
  readonly event: string
  readonly tool: ToolPart | undefined
  readonly result: HookRun
  readonly reply: Record<string, unknown>
  readonly took: Duration.Duration
}

const runs = Metric.counter("abhed_hook_runs_total", {
  description: "runs of a hook by `abhed-ext hook`, by event, status and decision",
  incremental: true
})
const latency = Metric.timer("abhed_hook_latency", { description: "one run of a hook, spawn to exit" })

/** How the run ended: `exited`, `signaled`, `timed_out`, `spawn_failed`. */
const statusOf = (run: HookRun): string => {
  switch (run._tag) {
    case "Exited":
      return "exited"
    case "Signaled":
      return "signaled"
    case "TimedOut":
      return "timed_out"
    case "SpawnFailed":
      return "spawn_failed"
  }
}

/**
 * The span's attributes (also the log record's): names, numbers and verdicts, never what the hook read or wrote.
 * `home`: what else the hook read than the request (its working folder, its environment's values), cut from its
 * reason like the request.
 */
export const runAttributes = (
  run: ObservedRun,
  command: string,
  format: HookFormat,
  home: ReadonlyArray<string> = []
): Record<string, string | number | boolean> => ({
  ...plainAttributes(run, command, format),
  ...reasonAttribute(run, home)
})

/** Every attribute but the reason: what is recorded as the answer goes out. */
const plainAttributes = (
  run: ObservedRun,
  command: string,
  format: HookFormat
): Record<string, string | number | boolean> => {
  const { event, reply, request, result, tool } = run
  const out: Record<string, string | number | boolean> = {
    "abhed.event": event,
    "abhed.hook.command": command,
    "abhed.hook.format": format
  }
  const peer = peerEvent(format, event)
  if (peer !== undefined) out["abhed.hook.event"] = peer
  // The names the agent chose, bounded as the host's spans bound them: none makes a span a megabyte.
  if (typeof request["session_id"] === "string") out["gen_ai.conversation.id"] = bounded(request["session_id"])
  if (tool !== undefined) {
    out["gen_ai.tool.name"] = bounded(tool.tool)
    out["gen_ai.tool.call.id"] = bounded(tool.callId)
    out["gen_ai.operation.name"] = "execute_tool"
    out["abhed.hook.tool"] = bounded(tool.peerTool)
  }
  if (typeof request["round"] === "number") out["abhed.round"] = request["round"]
  out["abhed.hook.status"] = statusOf(result)
  if (result._tag === "Exited") out["abhed.hook.exit_code"] = result.code
  if (result._tag === "Signaled") out["abhed.hook.signal"] = result.signal
  if (result._tag === "Exited" && result.stdoutCut === true) out["abhed.hook.stdout_cut"] = true
  out["abhed.hook.decision"] = reply["failed"] !== undefined ? "failed" : verdictOf(reply)
  out["abhed.hook.latency_ms"] = Math.round(Duration.toMillis(run.took))
  return out
}

/**
 * The answer's reason, less what it quotes of what the hook read or proposed (TelemetryQuotes.ts): a reason may
 * quote the args or the tool's output. Worked out when the batch is written, not as the answer goes out: it walks
 * the request.
 */
const reasonAttribute = (run: ObservedRun, home: ReadonlyArray<string>): Record<string, string> => {
  // A failed run's reply says why in `failed`: the reason of the run, as a note was before.
  const failed = run.reply["failed"]
  const said = typeof failed === "string" ? { reason: failed } : run.reply
  const reason = reasonOf(said, () => requestTexts(run.request, said, home))
  return reason === undefined ? {} : { "abhed.hook.reason": reason }
}

/** Records runs into the exporters `layer` makes: a no-op until it is built, and when nothing is exported. */
export interface HookTelemetry {
  readonly warnings: ReadonlyArray<string>
  readonly layer: Layer.Layer<never>
  readonly observe: (run: ObservedRun) => void
}

/** From the standard variables (`process.env`): the layer to serve in, and what records each run. */
export const fromEnv = (
  env: Readonly<Record<string, string | undefined>>,
  command: string,
  format: HookFormat
): HookTelemetry => {
  const { settings, warnings } = TelemetryConfig.fromEnv(env)
  // The command's name: its path may name a home folder, its arguments may hold anything.
  const name = basename(command)
  // What the hook reads besides the request: the folder it runs in (its input's `cwd`) and the environment it runs
  // with (the project variables, a token it uses: a failing curl's message may quote either).
  const home = [process.cwd(), ...Object.values(env)].filter((x): x is string => x !== undefined)
  let tracer: Tracer.Tracer | undefined
  let sink: Telemetry.TelemetrySinkShape | undefined
  const capture = (exporters: typeof Telemetry) =>
    Layer.effectDiscard(
      Effect.gen(function* () {
        const current = yield* Tracer.Tracer
        tracer = current === Tracer.nativeTracer ? undefined : current
        sink = yield* exporters.TelemetrySink
      })
    )
  const record = (run: ObservedRun) => {
    const attributes = plainAttributes(run, name, format)
    let reason: Record<string, string> | undefined
    const later = () => {
      reason ??= reasonAttribute(run, home)
      return reason
    }
    const endMillis = Date.now()
    const tookNanos = BigInt(Math.round(Duration.toMillis(run.took) * 1_000_000))
    const endNanos = BigInt(endMillis) * BigInt(1_000_000)
    const kept = { event: run.event, status: String(attributes["abhed.hook.status"]), hook: name }
    Metric.withAttributes(runs, { ...kept, decision: String(attributes["abhed.hook.decision"]) }).updateUnsafe(
      1,
      Context.empty()
    )
    Metric.withAttributes(latency, { event: run.event, hook: name }).updateUnsafe(run.took, Context.empty())
    // Each run a trace of its own: no parent (the adapter has no trace context from the host).
    const span = tracer?.span({
      name: "abhed.hook",
      parent: Option.none(),
      annotations: Context.empty(),
      links: [],
      startTime: endNanos - tookNanos,
      kind: "internal",
      root: true,
      sampled: true
    })
    if (span !== undefined) {
      for (const key in attributes) span.attribute(key, attributes[key])
      deferAttributes(span, later)
      span.end(endNanos, Exit.void)
    }
    sink?.log?.({ eventName: "abhed.hook", timeMillis: endMillis, attributes, body: attributes, span, later })
  }
  const observe = (run: ObservedRun) => {
    if (settings === undefined) return
    try {
      record(run)
    } catch {
      // Telemetry is never in an answer's way: a run it cannot record is lost to it alone.
    }
  }
  return {
    warnings,
    // The exporters are loaded only when something is exported: most adapters start without a collector.
    layer:
      settings === undefined
        ? Layer.empty
        : Layer.unwrap(
            Effect.promise(() => import("@abhed/host/Telemetry")).pipe(
              Effect.map((exporters) => Layer.provide(capture(exporters), exporters.layer(settings)))
            )
          ),
    observe
  }
}
