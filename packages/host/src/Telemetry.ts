import { Clock, ConfigProvider, Duration, Effect, Layer, Tracer } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import { OtlpExporter, OtlpMetrics, OtlpResource, OtlpSerialization } from "effect/observability"
import { runAfterDecision } from "./AfterDecision.ts"
import * as TelemetryConfig from "./TelemetryConfig.ts"
import * as TelemetryExport from "./TelemetryExport.ts"
import { logProtobuf, logRecordOf, type PendingLog } from "./TelemetryLogs.ts"
import { batchHead, encodeBatch } from "./TelemetryProtobuf.ts"
import * as TelemetryTracer from "./TelemetryTracer.ts"
import * as TelemetryTracerExport from "./TelemetryTracerExport.ts"
import { ScopeName } from "./TelemetryTracerExport.ts"
import { TelemetrySink, type TelemetrySinkShape } from "./TelemetrySink.ts"

/**
 * Decisions into the observability stack a fleet already runs: OpenTelemetry traces, metrics and logs over
 * OTLP/HTTP (docs/observability.md). Per dispatch a span `abhed.<event>` with a child span per extension exchange,
 * the host's metrics (`HostMetrics`), and each audit record as a log record, all without content.
 *
 * Exporting never gets in a decision's way: spans and records are buffered and sent by background fibers, a few
 * requests in flight per signal at most, each bounded by the timeout; what cannot be sent is dropped and counted; the
 * session's end sends what is left within the same bound.
 */
export { fromEnv, forEndpoint, type TelemetrySettings } from "./TelemetryConfig.ts"
export { countDecision, roundObserver, withDispatchSpan } from "./TelemetrySpans.ts"
export { underDispatchSpan } from "./TelemetryParent.ts"

export { type LogEntry, TelemetrySink, type TelemetrySinkShape } from "./TelemetrySink.ts"

/** The sink: span attributes from the record, and the record as a log record when logs are exported. */
const makeSink = (
  settings: TelemetryConfig.TelemetrySettings,
  stats: TelemetryExport.ExportStats,
  encode: TelemetryExport.Encode
) =>
  Effect.gen(function* () {
    const logsUrl = settings.endpoints.logs
    const clock = yield* Clock.Clock
    let push: ((pending: PendingLog) => void) | undefined
    const buffer = TelemetryExport.boundedBuffer<PendingLog>("logs", bufferCap(settings), stats)
    if (logsUrl !== undefined) {
      const resource = yield* OtlpResource.fromConfig({
        serviceName: settings.serviceName,
        attributes: settings.resourceAttributes
      })
      const head = batchHead(resource, ScopeName)
      const exporter = yield* OtlpExporter.make({
        label: "OtlpLogger",
        url: logsUrl,
        headers: TelemetryConfig.headersOf(settings, "logs"),
        exportInterval: Duration.millis(settings.intervalMillis),
        maxBatchSize: settings.maxBatchSize,
        // The log records are written here, on the exporter's fiber, not on the dispatch's.
        body: (data: ReadonlyArray<PendingLog>) => {
          buffer.taken(data.length)
          return [
            encode.logs(
              data.length,
              () => encodeBatch(head, data, (w, p) => logProtobuf(w, p, settings.args)),
              () => ({
                resourceLogs: [
                  {
                    resource,
                    scopeLogs: [
                      { scope: { name: ScopeName }, logRecords: data.map((p) => logRecordOf(p, settings.args)) }
                    ]
                  }
                ]
              })
            ),
            Effect.void
          ]
        },
        shutdownTimeout: Duration.millis(settings.timeoutMillis)
      })
      buffer.connect(exporter.push, settings.maxBatchSize)
      push = buffer.push
    }
    return {
      afterDecision: true,
      record: (record, span) => {
        if (span !== undefined) TelemetryTracer.tagRecord(span, record, settings.args)
        if (push === undefined) return
        // The span, not its ids: they are made (when no parent gave them) only when the batch is sent.
        push({ record, observed: clock.currentTimeNanosUnsafe(), span: span?.sampled ? span : undefined })
      },
      log: (entry) => push?.({ entry, observed: clock.currentTimeNanosUnsafe() })
    } satisfies TelemetrySinkShape
  })

/** What one signal may hold between two exports. */
const bufferCap = (settings: TelemetryConfig.TelemetrySettings) => settings.maxBatchSize * TelemetryExport.MaxInFlight

/**
 * What waits for after a decision (AfterDecision.ts) run now, then, once the event loop has run what was scheduled
 * before, the buffers' hand-overs (`boundedBuffer`): everything recorded is with the exporters.
 */
const afterHandOver = Effect.andThen(
  Effect.sync(runAfterDecision),
  Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
)

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/**
 * Exports to the collector `settings` name (`fromEnv`, `forEndpoint`): the tracer, the metrics and the record sink
 * for the host, for as long as the layer lives. Provide it around the code that runs the host (the dispatches read
 * the tracer, the host reads the sink when it is made). At its end, what is buffered is sent within the timeout,
 * and what could not be sent is one warning.
 */
export const layer = (settings: TelemetryConfig.TelemetrySettings): Layer.Layer<never> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const stats = TelemetryExport.makeStats()
      const batches: TelemetryExport.Batches = new WeakMap()
      const { service: serialization, encode } = yield* TelemetryExport.serialization(settings.protocol, batches)
      const { client, whenIdle } = yield* TelemetryExport.transport(
        Duration.millis(settings.timeoutMillis),
        batches,
        stats
      )
      const resource = { serviceName: settings.serviceName, attributes: settings.resourceAttributes }
      const shutdownTimeout = Duration.millis(settings.timeoutMillis)
      const { logs, metrics, traces } = settings.endpoints
      const spansBuffer = TelemetryExport.boundedBuffer<unknown>("traces", bufferCap(settings), stats)
      const tracer =
        traces === undefined
          ? Layer.empty
          : Layer.effect(
              Tracer.Tracer,
              TelemetryTracerExport.make({
                headers: TelemetryConfig.headersOf(settings, "traces"),
                shutdownTimeout,
                url: traces,
                resource,
                exportInterval: Duration.millis(settings.intervalMillis),
                buffer: spansBuffer,
                maxBatchSize: settings.maxBatchSize,
                args: settings.args,
                encode
              })
            )
      const metricsLayer =
        metrics === undefined
          ? Layer.empty
          : Layer.effectDiscard(
              OtlpMetrics.make({
                headers: TelemetryConfig.headersOf(settings, "metrics"),
                shutdownTimeout,
                url: metrics,
                resource,
                exportInterval: Duration.millis(settings.intervalMillis)
              })
            )
      const sink = Layer.effect(TelemetrySink, makeSink(settings, stats, encode))
      const exporters = Layer.mergeAll(
        tracer,
        metricsLayer,
        logs === undefined && traces === undefined ? Layer.empty : sink
      )
      // Built after the exporters, so closed before them: one concurrent flush of every signal within the timeout,
      // then the transport drops whatever else comes (the exporters' own final exports), so the end takes one bound.
      const flushAtEnd = Layer.effectDiscard(
        Effect.gen(function* () {
          const flusher = yield* OtlpExporter.Flusher
          yield* Effect.addFinalizer(() =>
            // The buffers' hand-over to the exporters first (one turn of the event loop), then the requests in flight:
            // the last flush must not find one and drop its batch (the final metrics).
            afterHandOver.pipe(
              Effect.andThen(whenIdle),
              Effect.andThen(flusher.flush),
              Effect.andThen(
                Effect.sync(() => {
                  stats.flushed = true
                })
              ),
              Effect.timeoutOption(Duration.millis(settings.timeoutMillis)),
              Effect.andThen(
                Effect.sync(() => {
                  stats.closed = true
                })
              )
            )
          )
        })
      )
      // Built before the exporters, so closed after them: the warning counts what their own ends dropped too.
      const warnAtEnd = Layer.effectDiscard(
        Effect.addFinalizer(() =>
          Effect.suspend(() => {
            const { dropped } = stats
            const total = dropped.traces + dropped.metrics + dropped.logs
            return total === 0
              ? Effect.void
              : Effect.logWarning(
                  `telemetry: not exported: ${plural(dropped.traces, "span", "spans")}, ${plural(dropped.logs, "log record", "log records")}, ` +
                    `${plural(dropped.metrics, "metrics export", "metrics exports")} (${stats.firstFailure ?? "too many batches in flight"})`
                )
          })
        )
      )
      return flushAtEnd.pipe(
        Layer.provideMerge(exporters),
        Layer.provideMerge(warnAtEnd),
        Layer.provide(
          Layer.mergeAll(
            OtlpExporter.layerFlusher,
            Layer.succeed(OtlpSerialization.OtlpSerialization, serialization),
            Layer.succeed(HttpClient.HttpClient, client)
          )
        ),
        // Every setting is explicit: effect's resource reader must not read (and die on) the environment itself.
        Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({})))
      )
    })
  )

/**
 * From the standard environment variables (`process.env` by default): `layer` when an endpoint is set and
 * `OTEL_SDK_DISABLED` is not true, else nothing. Each bad value is a warning on the log that names the variable.
 */
export const layerFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): Layer.Layer<never> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const { settings, warnings } = TelemetryConfig.fromEnv(env)
      for (const w of warnings) yield* Effect.logWarning(`telemetry: ${w}`)
      return settings === undefined ? Layer.empty : layer(settings)
    })
  )
