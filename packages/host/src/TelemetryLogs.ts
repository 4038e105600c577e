import { isJsonObject } from "@abhed/protocol/Json"
import type { Tracer } from "effect"
import { OtlpResource } from "effect/observability"
import type { AuditRecord } from "./AuditRecord.ts"
import type { Writer } from "./TelemetryProtobuf.ts"
import { bounded, logBody, type OutcomeSummary, outcomeSummary, type Put, putRecord } from "./TelemetryRecord.ts"
import type { LogEntry } from "./TelemetrySink.ts"
import { MillisToNanos } from "./TelemetrySpans.ts"

/**
 * The log records waiting for the log exporter (Telemetry.ts), and their OTLP form, made only when their batch is
 * sent: protobuf written straight from the record, or effect's OTLP/JSON shapes.
 */

/** A record waiting for the log exporter: as the host has it, with when it was observed and in which span. */
export type PendingLog =
  | { readonly record: AuditRecord; readonly observed: bigint; readonly span: Tracer.Span | undefined }
  | { readonly entry: LogEntry; readonly observed: bigint }

const SeverityInfo = 9 as const
const SeverityText = "INFO"

/** The span a log record is in (its trace and span ids), when it is sampled. */
const spanOf = (pending: PendingLog): Tracer.Span | undefined =>
  "entry" in pending ? (pending.entry.span?.sampled ? pending.entry.span : undefined) : pending.span

const timeOf = (pending: PendingLog): bigint =>
  BigInt("entry" in pending ? pending.entry.timeMillis : Date.parse(pending.record.time)) * MillisToNanos

/** The record's outcome, read once for its body and its attributes. */
const summaryOf = (pending: PendingLog): OutcomeSummary | undefined =>
  "record" in pending ? outcomeSummary(pending.record.outcome) : undefined

/** An entry's body, with what it works out only now (`later`) when the body is an object. */
const entryBody = (entry: LogEntry): unknown =>
  entry.later !== undefined && isJsonObject(entry.body) ? { ...entry.body, ...entry.later() } : entry.body

/** The body: the entry's, or the record without its content (`logBody`), written as JSON. */
const bodyOf = (pending: PendingLog, args: "digest" | "full", summary: OutcomeSummary | undefined) =>
  JSON.stringify("entry" in pending ? entryBody(pending.entry) : logBody(pending.record, args, summary)) as
    | string
    | undefined

/** The attributes: an entry's `event.name` (unless its attributes name one) and attributes; a record's event, session, decision, args' digest, call id and tool. */
const putAttributes = (pending: PendingLog, args: "digest" | "full", summary: OutcomeSummary | undefined, put: Put) => {
  if ("entry" in pending) {
    const { entry } = pending
    if (!("event.name" in entry.attributes)) put("event.name", entry.eventName)
    for (const key in entry.attributes) put(key, entry.attributes[key])
    if (entry.later !== undefined) {
      const later = entry.later()
      for (const key in later) put(key, later[key])
    }
    return
  }
  const { record } = pending
  put("event.name", "abhed.audit")
  put("abhed.event", record.event)
  put("gen_ai.conversation.id", bounded(record.session_id))
  putRecord(record, args, put, summary)
  if (record.call_id !== undefined) put("gen_ai.tool.call.id", bounded(record.call_id))
  if (record.tool !== undefined) put("gen_ai.tool.name", bounded(record.tool))
}

/** A log record in OTLP/JSON's shape. */
export const logRecordOf = (pending: PendingLog, args: "digest" | "full") => {
  const attributes: Array<OtlpResource.KeyValue> = []
  const summary = summaryOf(pending)
  putAttributes(pending, args, summary, (key, value) => {
    attributes.push({ key, value: OtlpResource.unknownToAttributeValue(value) })
  })
  const span = spanOf(pending)
  const body = bodyOf(pending, args, summary)
  return {
    timeUnixNano: String(timeOf(pending)),
    observedTimeUnixNano: String(pending.observed),
    severityNumber: SeverityInfo,
    severityText: SeverityText,
    body: body === undefined ? {} : { stringValue: body },
    attributes,
    droppedAttributesCount: 0,
    ...(span !== undefined ? { traceId: span.traceId.padStart(32, "0"), spanId: span.spanId } : {})
  }
}

/** A log record in protobuf (`LogRecord`), straight from what waits: what `logRecordOf` makes, field by field. */
export const logProtobuf = (w: Writer, pending: PendingLog, args: "digest" | "full") => {
  w.fixed64(1, timeOf(pending))
  w.uint(2, SeverityInfo)
  w.string(3, SeverityText)
  const summary = summaryOf(pending)
  const body = bodyOf(pending, args, summary)
  const at = w.begin(5)
  if (body !== undefined) w.string(1, body)
  w.end(at)
  w.kvField = 6
  putAttributes(pending, args, summary, w.put)
  const span = spanOf(pending)
  if (span !== undefined) {
    w.hexBytes(9, span.traceId.padStart(32, "0"))
    w.hexBytes(10, span.spanId)
  }
  w.fixed64(11, pending.observed)
}
