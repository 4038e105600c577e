import { Cause, type Duration, Effect, type Option, Tracer } from "effect"
import * as Hex from "effect/encoding/Hex"
import type * as HttpClient from "effect/http/HttpClient"
import { OtlpExporter, OtlpResource, OtlpSerialization, type OtlpTracer } from "effect/observability"
import type { Scope } from "effect/Scope"
import type { boundedBuffer } from "./TelemetryExport.ts"
import { dispatchAttributes, exchangeAttributes, recordAttributes } from "./TelemetryRecord.ts"
import { type ExchangeSpan, ExportedSpan, exporting, type Pending } from "./TelemetryTracer.ts"

/**
 * The exporting tracer's OTLP side (TelemetryTracer.ts holds its spans, on the dispatch's path): each batch of spans
 * in its OTLP form, sent through the shared exporter machinery. Loaded with the exporters (Telemetry.ts), only when
 * something is exported.
 */

type OtlpSpan = OtlpTracer.ScopeSpan["spans"][number]

const SpanKind: Record<Tracer.SpanKind, number> = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 }
const StatusUnset = 0
const StatusOk = 1
const StatusError = 2

const parentOf = (parent: Option.Option<Tracer.AnySpan>): string | undefined =>
  parent._tag === "Some" ? parent.value.spanId : undefined

const exchangeToOtlp = (x: ExchangeSpan): OtlpSpan => ({
  traceId: x.parent.traceId.padStart(32, "0"),
  spanId: Hex.random(16),
  parentSpanId: x.parent.spanId,
  name: "abhed.extension",
  kind: SpanKind.internal,
  startTimeUnixNano: String(x.start),
  endTimeUnixNano: String(x.end),
  attributes: OtlpResource.entriesToAttributes(Object.entries(exchangeAttributes(x.exchange, x.round))),
  droppedAttributesCount: 0,
  events: [],
  droppedEventsCount: 0,
  status: { code: StatusOk },
  links: [],
  droppedLinksCount: 0
})

/** As effect's OTLP tracer writes a span: the same ids, kinds, status and exception events. */
const toOtlp = (span: Pending): OtlpSpan => {
  if (!(span instanceof ExportedSpan)) return exchangeToOtlp(span)
  const status = span.status
  const endTime = status._tag === "Ended" ? status.endTime : status.startTime
  const attributes =
    span.dispatch === undefined
      ? []
      : OtlpResource.entriesToAttributes(Object.entries(dispatchAttributes(span.dispatch)))
  attributes.push(...OtlpResource.entriesToAttributes(span.attributes))
  if (span.record !== undefined) {
    attributes.push(
      ...OtlpResource.entriesToAttributes(Object.entries(recordAttributes(span.record, span.recorder.args)))
    )
  }
  if (span.deferred !== undefined) attributes.push(...OtlpResource.entriesToAttributes(Object.entries(span.deferred())))
  const events: Array<OtlpSpan["events"][number]> = []
  let code: 0 | 1 | 2 = StatusOk
  let message: string | undefined
  if (status._tag === "Ended" && status.exit._tag === "Failure") {
    if (Cause.hasInterruptsOnly(status.exit.cause)) {
      code = StatusUnset
      attributes.push({ key: "effect.fiber.interrupted", value: { boolValue: true } })
    } else {
      const errors = Cause.prettyErrors(status.exit.cause)
      code = errors.length > 0 ? StatusError : StatusOk
      message = errors[0]?.message
      for (const error of errors) {
        events.push({
          name: "exception",
          timeUnixNano: String(endTime),
          droppedAttributesCount: 0,
          attributes: [
            { key: "exception.type", value: { stringValue: error.name } },
            { key: "exception.message", value: { stringValue: error.message } }
          ]
        })
      }
    }
  }
  return {
    traceId: span.traceId.padStart(32, "0"),
    spanId: span.spanId,
    parentSpanId: parentOf(span.parent),
    name: span.name,
    kind: SpanKind[span.kind],
    startTimeUnixNano: String(span.startTime),
    endTimeUnixNano: String(endTime),
    attributes,
    droppedAttributesCount: 0,
    events,
    droppedEventsCount: 0,
    status: message === undefined ? { code } : { code, message },
    links: span.links.map((link) => ({
      traceId: link.span.traceId.padStart(32, "0"),
      spanId: link.span.spanId,
      attributes: OtlpResource.entriesToAttributes(Object.entries(link.attributes)),
      droppedAttributesCount: 0
    })),
    droppedLinksCount: 0
  }
}

/** The tracer, exporting to `url` through the shared exporter machinery (batches, flush, shutdown). */
export const make = (options: {
  readonly url: string
  readonly resource: { readonly serviceName: string; readonly attributes: Record<string, unknown> }
  readonly headers: Record<string, string>
  readonly exportInterval: Duration.Duration
  readonly buffer: ReturnType<typeof boundedBuffer<Pending>>
  readonly maxBatchSize: number
  readonly shutdownTimeout: Duration.Duration
  readonly args: "digest" | "full"
}): Effect.Effect<
  Tracer.Tracer,
  never,
  OtlpExporter.Flusher | OtlpSerialization.OtlpSerialization | HttpClient.HttpClient | Scope
> =>
  Effect.gen(function* () {
    const resource = yield* OtlpResource.fromConfig(options.resource)
    const serialization = yield* OtlpSerialization.OtlpSerialization
    const exporter = yield* OtlpExporter.make({
      label: "OtlpTracer",
      url: options.url,
      headers: options.headers,
      exportInterval: options.exportInterval,
      maxBatchSize: options.maxBatchSize,
      body: (spans: ReadonlyArray<Pending>) => {
        options.buffer.taken(spans.length)
        return [
          serialization.traces({
            resourceSpans: [{ resource, scopeSpans: [{ scope: { name: "abhed" }, spans: spans.map(toOtlp) }] }]
          }),
          Effect.void
        ]
      },
      shutdownTimeout: options.shutdownTimeout
    })
    options.buffer.connect(exporter.push, options.maxBatchSize)
    const recorder: { tracer: Tracer.Tracer; push: (item: Pending) => void; args: "digest" | "full" } = {
      tracer: Tracer.nativeTracer,
      push: options.buffer.push,
      args: options.args
    }
    recorder.tracer = Tracer.make({ span: (spanOptions) => new ExportedSpan(spanOptions, recorder) })
    exporting.set(recorder.tracer, recorder)
    return recorder.tracer
  })
