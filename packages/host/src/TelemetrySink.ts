import { Context, type Tracer } from "effect"
import type { AuditRecord } from "./AuditRecord.ts"

/**
 * Where the host hands what it records to the exporters, when telemetry is on. Its own file, apart from the
 * exporters (Telemetry.ts): the host reads it on every start, and a host that exports nothing never loads them.
 */

/** What the host hands each dispatch's record to, when telemetry is on (read once, when the host is made). */
export interface TelemetrySinkShape {
  /** The record of a dispatch, inside its span (undefined when no tracer is exporting). */
  readonly record: (record: AuditRecord, span: Tracer.Span | undefined) => void
  /**
   * Any other log record (the hook adapter's runs: `abhed-ext hook`), in `span`'s trace when given. Made into its
   * OTLP form when its batch is sent, like the records.
   */
  readonly log?: ((entry: LogEntry) => void) | undefined
  /**
   * May the host hand `record` its record after the decision (AfterDecision.ts) rather than before it? Set by
   * `Telemetry.layer`'s own sink, which only buffers what it is handed; another sink gets each record before its
   * dispatch returns, inside its span.
   */
  readonly afterDecision?: boolean | undefined
}

/** A log record: its `event.name`, when it happened, its attributes and a body written as JSON. */
export interface LogEntry {
  readonly eventName: string
  readonly timeMillis: number
  readonly attributes: Readonly<Record<string, unknown>>
  readonly body: unknown
  readonly span: Tracer.Span | undefined
  /** Attributes worked out only when the batch is written (a hook's reason), added to an object body too. */
  readonly later?: (() => Readonly<Record<string, unknown>>) | undefined
}
export const TelemetrySink = Context.Reference<TelemetrySinkShape | undefined>("@abhed/host/TelemetrySink", {
  defaultValue: () => undefined
})
