import { Cause, type Duration, Effect, type Option, Tracer } from "effect"
import * as Hex from "effect/encoding/Hex"
import type * as HttpClient from "effect/http/HttpClient"
import { OtlpExporter, OtlpResource, type OtlpTracer } from "effect/observability"
import type * as EffectScope from "effect/Scope"
import type { boundedBuffer, Encode } from "./TelemetryExport.ts"
import { batchHead, encodeBatch, type Writer } from "./TelemetryProtobuf.ts"
import {
  dispatchAttributes,
  exchangeAttributes,
  putDispatch,
  putExchange,
  putRecord,
  recordAttributes
} from "./TelemetryRecord.ts"
import { type HomeTexts, homeTexts } from "./TelemetryQuotes.ts"
import { type ExchangeSpan, ExportedSpan, exporting, type Pending } from "./TelemetryTracer.ts"

/**
 * The exporting tracer's OTLP side (TelemetryTracer.ts holds its spans, on the dispatch's path): each batch of spans
 * written in its protocol when it is sent (protobuf straight from the spans; OTLP/JSON through effect's OTLP
 * shapes), through the shared exporter machinery. Loaded with the exporters (Telemetry.ts), only when something is
 * exported.
 */

type OtlpSpan = OtlpTracer.ScopeSpan["spans"][number]

/** The instrumentation scope of every span and log record. */
export const ScopeName = "abhed"

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
  attributes: OtlpResource.entriesToAttributes(Object.entries(exchangeAttributes(x.exchange, x.round, textsOf(x)))),
  droppedAttributesCount: 0,
  events: [],
  droppedEventsCount: 0,
  status: { code: StatusOk },
  links: [],
  droppedLinksCount: 0
})

/** As effect's OTLP tracer writes a span: the same ids, kinds, status and exception events (for OTLP/JSON). */
const toOtlp = (span: Pending): OtlpSpan => {
  if (!(span instanceof ExportedSpan)) return exchangeToOtlp(span)
  const endTime = endTimeOf(span)
  const ending = endingOf(span)
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
  if (ending.interrupted) attributes.push({ key: "effect.fiber.interrupted", value: { boolValue: true } })
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
    events: ending.errors.map((error) => ({
      name: "exception",
      timeUnixNano: String(endTime),
      droppedAttributesCount: 0,
      attributes:
        error.message === undefined
          ? [{ key: "exception.type", value: { stringValue: error.name } }]
          : [
              { key: "exception.type", value: { stringValue: error.name } },
              { key: "exception.message", value: { stringValue: error.message } }
            ]
    })),
    droppedEventsCount: 0,
    status: ending.message === undefined ? { code: ending.code } : { code: ending.code, message: ending.message },
    links: span.links.map((link) => ({
      traceId: link.span.traceId.padStart(32, "0"),
      spanId: link.span.spanId,
      attributes: OtlpResource.entriesToAttributes(Object.entries(link.attributes)),
      droppedAttributesCount: 0
    })),
    droppedLinksCount: 0
  }
}

/** How a span ended, as OTLP says it: effect's OTLP tracer's status code, message and exception events. */
interface Ending {
  readonly code: 0 | 1 | 2
  readonly message: string | undefined
  readonly errors: ReadonlyArray<{ readonly name: string; readonly message?: string | undefined }>
  readonly interrupted: boolean
}
const EndedOk: Ending = { code: StatusOk, message: undefined, errors: [], interrupted: false }

const endingOf = (span: ExportedSpan): Ending => {
  const status = span.status
  if (status._tag !== "Ended" || status.exit._tag !== "Failure") return EndedOk
  if (Cause.hasInterruptsOnly(status.exit.cause))
    return { code: StatusUnset, message: undefined, errors: [], interrupted: true }
  const errors = Cause.prettyErrors(status.exit.cause)
  const code = errors.length > 0 ? StatusError : StatusOk
  // A dispatch's failure by its shape alone: a defect's message (a policy hook's, quoting the args it could not read,
  // as JSON.parse does) may hold what the agent sent.
  if (span.dispatch !== undefined)
    return { code, message: undefined, errors: errors.map((e) => ({ name: e.name })), interrupted: false }
  return { code, message: errors[0]?.message, errors, interrupted: false }
}

const endTimeOf = (span: ExportedSpan): bigint =>
  span.status._tag === "Ended" ? span.status.endTime : span.status.startTime

/**
 * What an exchange's dispatch keeps home, for its reason (TelemetryQuotes.ts): from the dispatch's record, which is
 * on its span by the time a batch is written. Without one, nothing to compare with: the reason stays home.
 */
const textsOf = (x: ExchangeSpan) => (): HomeTexts =>
  x.parent instanceof ExportedSpan && x.parent.record !== undefined
    ? homeTexts(x.parent.record, x.parent.recorder.args)
    : undefined

/** An exchange's child span, in protobuf (`Span`), straight from its record. */
const exchangeProtobuf = (w: Writer, x: ExchangeSpan) => {
  w.hexBytes(1, x.parent.traceId.padStart(32, "0"))
  w.randomId(2, 8)
  w.hexBytes(4, x.parent.spanId)
  w.string(5, "abhed.extension")
  w.uint(6, SpanKind.internal)
  w.fixed64(7, x.start)
  w.fixed64(8, x.end)
  w.kvField = 9
  putExchange(x.exchange, x.round, w.put, textsOf(x))
  const status = w.begin(15)
  w.uint(3, StatusOk)
  w.end(status)
}

/** A span in protobuf (`Span`), straight from the span: what `toOtlp` makes, field by field. */
const spanProtobuf = (w: Writer, span: Pending) => {
  if (!(span instanceof ExportedSpan)) return exchangeProtobuf(w, span)
  const endTime = endTimeOf(span)
  const ending = endingOf(span)
  w.hexBytes(1, span.traceId.padStart(32, "0"))
  w.hexBytes(2, span.spanId)
  w.hexBytes(4, parentOf(span.parent))
  w.string(5, span.name)
  w.uint(6, SpanKind[span.kind])
  w.fixed64(7, span.startTime)
  w.fixed64(8, endTime)
  w.kvField = 9
  if (span.dispatch !== undefined) putDispatch(span.dispatch, w.put)
  for (const [key, value] of span.attributes) w.keyValue(9, key, value)
  if (span.record !== undefined) putRecord(span.record, span.recorder.args, w.put)
  if (span.deferred !== undefined) {
    const deferred = span.deferred()
    for (const key in deferred) w.keyValue(9, key, deferred[key])
  }
  if (ending.interrupted) w.keyValue(9, "effect.fiber.interrupted", true)
  for (const error of ending.errors) {
    const event = w.begin(11)
    w.fixed64(1, endTime)
    w.string(2, "exception")
    w.keyValue(3, "exception.type", error.name)
    if (error.message !== undefined) w.keyValue(3, "exception.message", error.message)
    w.end(event)
  }
  for (const link of span.links) {
    const at = w.begin(13)
    w.hexBytes(1, link.span.traceId.padStart(32, "0"))
    w.hexBytes(2, link.span.spanId)
    for (const key in link.attributes) w.keyValue(4, key, link.attributes[key])
    w.end(at)
  }
  const status = w.begin(15)
  if (ending.message !== undefined) w.string(2, ending.message)
  w.uint(3, ending.code)
  w.end(status)
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
  readonly encode: Encode
}): Effect.Effect<Tracer.Tracer, never, OtlpExporter.Flusher | HttpClient.HttpClient | EffectScope.Scope> =>
  Effect.gen(function* () {
    const resource = yield* OtlpResource.fromConfig(options.resource)
    const head = batchHead(resource, ScopeName)
    const exporter = yield* OtlpExporter.make({
      label: "OtlpTracer",
      url: options.url,
      headers: options.headers,
      exportInterval: options.exportInterval,
      maxBatchSize: options.maxBatchSize,
      body: (spans: ReadonlyArray<Pending>) => {
        options.buffer.taken(spans.length)
        return [
          options.encode.traces(
            spans.length,
            () => encodeBatch(head, spans, spanProtobuf),
            () => ({
              resourceSpans: [{ resource, scopeSpans: [{ scope: { name: ScopeName }, spans: spans.map(toOtlp) }] }]
            })
          ),
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
