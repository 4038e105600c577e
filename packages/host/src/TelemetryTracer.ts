import type { EventName } from "@abhed/protocol"
import {
  Cause,
  Clock,
  Context,
  type Duration,
  Effect,
  type Exit,
  type Fiber,
  LogLevel,
  Option,
  References,
  Tracer
} from "effect"
import * as Hex from "effect/encoding/Hex"
import type * as HttpClient from "effect/http/HttpClient"
import { OtlpExporter, OtlpResource, OtlpSerialization, type OtlpTracer } from "effect/observability"
import type { Scope } from "effect/Scope"
import type { AuditRecord } from "./AuditRecord.ts"
import type { Exchange } from "./dispatch/Exchange.ts"
import type { boundedBuffer } from "./TelemetryExport.ts"
import { type DispatchFields, dispatchAttributes, exchangeAttributes, recordAttributes } from "./TelemetryRecord.ts"

/**
 * A tracer whose spans are turned into their OTLP form when their batch is sent, not when they end: on the
 * dispatch's path a span only records what it will say (effect's own `NativeSpan`, plus the dispatch's fields and
 * record as they are) and hands itself to the buffer. Measured: effect's OTLP tracer converts each span (its
 * attributes, ids and status) in `end`, more than the rest of what exporting adds to a dispatch; and an exchange's
 * child span as a `NativeSpan` (with its context, ids and end) cost more than the plain record it now is.
 */

/** Where this tracer's spans go, and how a record's args leave (`TelemetrySettings.args`). */
interface Recorder {
  readonly tracer: Tracer.Tracer
  readonly push: (item: Pending) => void
  readonly args: "digest" | "full"
}

class ExportedSpan extends Tracer.NativeSpan {
  readonly recorder: Recorder
  /** Attributes worked out only when the span is sent (`deferAttributes`). */
  deferred: (() => Record<string, unknown>) | undefined = undefined
  /** A dispatch's first attributes, made when it is sent (`tagDispatch`). */
  dispatch: DispatchFields | undefined = undefined
  /** A dispatch's record: the decision, rounds and args' digest, worked out when it is sent (`tagRecord`). */
  record: AuditRecord | undefined = undefined
  constructor(options: ConstructorParameters<typeof Tracer.NativeSpan>[0], recorder: Recorder) {
    super(options)
    this.recorder = recorder
  }

  override end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    if (this.status._tag === "Ended") return
    super.end(endTime, exit)
    if (this.sampled) this.recorder.push(this)
  }
}

/** An extension exchange's child span, as it is recorded: no span object, no ids until it is sent. */
interface ExchangeSpan {
  readonly parent: Tracer.AnySpan
  readonly exchange: Exchange<EventName>
  readonly round: number
  readonly start: bigint
  readonly end: bigint
}

/** The exporting tracers made here, and where their spans go. */
const exporting = new WeakMap<Tracer.Tracer, Recorder>()

/**
 * Would a span of `tracer` under `parent` point at a parent no collector will ever get? A span of effect's own
 * `nativeTracer` (the CLI's command span, made before the exporting tracer was installed) is never sent: under it,
 * every dispatch of a session would share one trace whose root is missing.
 */
export const unsentParent = (tracer: Tracer.Tracer, parent: Tracer.AnySpan | undefined): boolean =>
  parent instanceof Tracer.NativeSpan && !(parent instanceof ExportedSpan) && exporting.has(tracer)

/**
 * A dispatch's span as a root span of `tracer` (starting now, ended by the caller), made straight when `tracer` is
 * one of these and the fiber asks for nothing beyond effect's defaults: tracing on, timing on, no span annotations
 * or links from the environment. The same span `Effect.useSpan` makes then, without its lookups and its ending
 * effect (measured on the dispatch's path, docs/benchmarks.md). Undefined otherwise: the caller uses `useSpan`.
 */
export const rootSpan = (
  tracer: Tracer.Tracer,
  fiber: Fiber.Fiber<unknown, unknown>,
  name: string
): Tracer.Span | undefined => {
  const recorder = exporting.get(tracer)
  if (
    recorder === undefined ||
    !fiber.cache.tracerEnabled ||
    !fiber.getRef(References.TracerTimingEnabled) ||
    fiber.getRef(References.TracerSpanLinks).length > 0
  )
    return undefined
  for (const _ in fiber.getRef(References.TracerSpanAnnotations)) return undefined
  return new ExportedSpan(
    {
      name,
      parent: Option.none(),
      annotations: Context.empty(),
      links: [],
      startTime: fiber.getRef(Clock.Clock).currentTimeNanosUnsafe(),
      kind: "internal",
      sampled: !LogLevel.isGreaterThan(fiber.getRef(Tracer.MinimumTraceLevel), fiber.getRef(Tracer.CurrentTraceLevel))
    },
    recorder
  )
}

/** What waits in the buffer. */
type Pending = ExportedSpan | ExchangeSpan

/** Sets a dispatch's first attributes: when `span` is one of this tracer's, only when it is sent. */
export const tagDispatch = (span: Tracer.Span, fields: DispatchFields): void => {
  if (span instanceof ExportedSpan && span.status._tag === "Started") span.dispatch = fields
  else {
    const now = dispatchAttributes(fields)
    for (const key in now) span.attribute(key, now[key])
  }
}

/**
 * Attributes `span` gets when it is sent rather than now, when it is one of this tracer's (else: now). For what is
 * worked out from a dispatch's record (the args' digest among them): none of it on the dispatch's path.
 */
export const deferAttributes = (span: Tracer.Span, attributes: () => Record<string, unknown>): void => {
  if (span instanceof ExportedSpan && span.status._tag === "Started") span.deferred = attributes
  else {
    const now = attributes()
    for (const key in now) span.attribute(key, now[key])
  }
}

/** The record's attributes on its dispatch's span: kept as the record, when the span is one of this tracer's. */
export const tagRecord = (span: Tracer.Span, record: AuditRecord, args: "digest" | "full"): void => {
  if (span instanceof ExportedSpan && span.status._tag === "Started") span.record = record
  else deferAttributes(span, () => recordAttributes(record, args))
}

/**
 * Records an exchange's child span of `parent` when `parent` is one of `tracer`'s spans (false otherwise: the
 * caller makes a span of its own). Not sampled: nothing to record.
 */
export const recordExchange = (
  tracer: Tracer.Tracer,
  parent: Tracer.AnySpan,
  exchange: Exchange<EventName>,
  round: number,
  start: bigint,
  end: bigint
): boolean => {
  if (!(parent instanceof ExportedSpan) || parent.recorder.tracer !== tracer) return false
  if (parent.sampled) parent.recorder.push({ parent, exchange, round, start, end })
  return true
}

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
