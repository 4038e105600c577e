import type { EventName } from "@abhed/protocol"
import { Clock, Context, type Exit, type Fiber, LogLevel, Option, References, Tracer } from "effect"
import type { AuditRecord } from "./AuditRecord.ts"
import type { Exchange } from "./dispatch/Exchange.ts"
import { type DispatchFields, dispatchAttributes, recordAttributes } from "./TelemetryRecord.ts"

/**
 * A tracer whose spans are turned into their OTLP form when their batch is sent, not when they end: on the
 * dispatch's path a span only records what it will say (effect's own `NativeSpan`, plus the dispatch's fields and
 * record as they are) and hands itself to the buffer. Measured: effect's OTLP tracer converts each span (its
 * attributes, ids and status) in `end`, more than the rest of what exporting adds to a dispatch; and an exchange's
 * child span as a `NativeSpan` (with its context, ids and end) cost more than the plain record it now is. Here the
 * spans, which every host loads; their OTLP form and the exporter, loaded only when something is exported, in
 * TelemetryTracerExport.ts.
 */

/** Where this tracer's spans go, and how a record's args leave (`TelemetrySettings.args`). */
export interface Recorder {
  readonly tracer: Tracer.Tracer
  readonly push: (item: Pending) => void
  readonly args: "digest" | "full"
}

export class ExportedSpan extends Tracer.NativeSpan {
  readonly recorder: Recorder
  /** Attributes worked out only when the span is sent (`deferAttributes`). */
  deferred: (() => Record<string, unknown>) | undefined = undefined
  /** A dispatch's first attributes, made when it is sent (`tagDispatch`). */
  dispatch: DispatchFields | undefined = undefined
  /** A dispatch's record: the decision, rounds and args' digest, worked out when it is sent (`tagRecord`). */
  record: AuditRecord | undefined = undefined
  /** Ended after its dispatch's decision (`dispatchSpan`): its record may be handed over then too. */
  endsLater = false
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
export interface ExchangeSpan {
  readonly parent: Tracer.AnySpan
  readonly exchange: Exchange<EventName>
  readonly round: number
  readonly start: bigint
  readonly end: bigint
}

/** The exporting tracers made here, and where their spans go. */
export const exporting = new WeakMap<Tracer.Tracer, Recorder>()

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
): ExportedSpan | undefined => {
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

/** Does `span` end after its dispatch's decision (AfterDecision.ts), so that its record may be tagged then too? */
export const endsAfterDecision = (span: Tracer.Span): boolean => span instanceof ExportedSpan && span.endsLater

/**
 * Are `parent`'s exchanges recorded by `recordExchange` (a span of `tracer`, one of these)? Then they may be
 * recorded after the decision.
 */
export const recordsExchanges = (tracer: Tracer.Tracer, parent: Tracer.AnySpan): parent is ExportedSpan =>
  parent instanceof ExportedSpan && parent.recorder.tracer === tracer

/** What waits in the buffer. */
export type Pending = ExportedSpan | ExchangeSpan

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
  if (!recordsExchanges(tracer, parent)) return false
  if (parent.sampled) parent.recorder.push({ parent, exchange, round, start, end })
  return true
}
