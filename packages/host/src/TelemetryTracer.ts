import { Cause, type Duration, Effect, type Exit, type Option, Tracer } from "effect"
import type * as HttpClient from "effect/http/HttpClient"
import { OtlpExporter, OtlpResource, OtlpSerialization, type OtlpTracer } from "effect/observability"
import type { Scope } from "effect/Scope"
import type { boundedBuffer } from "./TelemetryExport.ts"

/**
 * A tracer whose spans are turned into their OTLP form when their batch is sent, not when they end: the dispatch
 * only records its span (effect's own `NativeSpan`) and hands it to the buffer. effect's OTLP tracer converts
 * each span (its attributes, ids and status) in `end`, on the dispatch's path: measured at more than the rest of
 * what exporting adds to a dispatch.
 */
class ExportedSpan extends Tracer.NativeSpan {
  private readonly push: (span: ExportedSpan) => void
  /** Attributes worked out only when the span is sent (`deferAttributes`). */
  deferred: (() => Record<string, unknown>) | undefined = undefined
  constructor(options: ConstructorParameters<typeof Tracer.NativeSpan>[0], push: (span: ExportedSpan) => void) {
    super(options)
    this.push = push
  }

  override end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    if (this.status._tag === "Ended") return
    super.end(endTime, exit)
    if (this.sampled) this.push(this)
  }
}

type OtlpSpan = OtlpTracer.ScopeSpan["spans"][number]

const SpanKind: Record<Tracer.SpanKind, number> = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 }
const StatusUnset = 0
const StatusOk = 1
const StatusError = 2

const parentOf = (parent: Option.Option<Tracer.AnySpan>): string | undefined =>
  parent._tag === "Some" ? parent.value.spanId : undefined

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

/** As effect's OTLP tracer writes a span: the same ids, kinds, status and exception events. */
const toOtlp = (span: ExportedSpan): OtlpSpan => {
  const status = span.status
  const endTime = status._tag === "Ended" ? status.endTime : status.startTime
  const attributes = OtlpResource.entriesToAttributes(span.attributes)
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
  readonly buffer: ReturnType<typeof boundedBuffer<ExportedSpan>>
  readonly maxBatchSize: number
  readonly shutdownTimeout: Duration.Duration
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
      body: (spans: ReadonlyArray<ExportedSpan>) => {
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
    options.buffer.connect(exporter.push)
    const push = options.buffer.push
    return Tracer.make({ span: (spanOptions) => new ExportedSpan(spanOptions, push) })
  })
