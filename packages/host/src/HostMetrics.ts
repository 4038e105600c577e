import { type EventName, EventNames } from "@abhed/protocol"
import { Duration, Metric } from "effect"
import type * as Context from "effect/Context"

/**
 * The host's metrics (effect's own, exported by any metrics backend: `Telemetry` sends them over OTLP):
 * dispatches and their latency per event, decisions per verdict and deciding extensions, each extension's latency,
 * deaths per cause, and the telemetry the exporter had to drop.
 */
type EventAttribute = { readonly event: EventName } | undefined
const dispatchesWith = (attributes: EventAttribute) =>
  Metric.counter("abhed_dispatch_total", {
    description: "events dispatched to extensions",
    incremental: true,
    attributes
  })
/**
 * A timer's histogram (`Metric.timer` is this one, behind `mapInput(Duration.toMillis)`): the same series, kept so
 * the hot path can update it with the milliseconds it has, without a Duration made and converted back per update.
 */
const timerHistogram = (name: string, description: string, attributes: Readonly<Record<string, string>> | undefined) =>
  Metric.histogram(name, {
    description,
    boundaries: Metric.exponentialBoundaries({ start: 0.5, factor: 2, count: 35 }),
    attributes: { ...attributes, time_unit: "milliseconds" }
  })
const latencyHistogramWith = (attributes: EventAttribute) =>
  timerHistogram("abhed_dispatch_latency", "time to decide one event", attributes)
const latencyWith = (attributes: EventAttribute) => Metric.mapInput(latencyHistogramWith(attributes), Duration.toMillis)
const dispatches = dispatchesWith(undefined)
const dispatchLatency = latencyWith(undefined)
const deaths = Metric.counter("abhed_extension_deaths_total", {
  description: "extensions marked dead",
  incremental: true
})
const decisionsWith = (
  attributes: { readonly event: string; readonly decision: string; readonly extension: string } | undefined
) =>
  Metric.counter("abhed_decisions_total", {
    description: 'decisions made, by verdict and by the extensions that decided (comma-separated, none: "")',
    incremental: true,
    attributes
  })
const decisions = decisionsWith(undefined)
const extensionLatencyHistogramWith = (attributes: { readonly extension: string } | undefined) =>
  timerHistogram("abhed_extension_latency", "one extension's time to answer one request", attributes)
const extensionLatency = Metric.mapInput(extensionLatencyHistogramWith(undefined), Duration.toMillis)
const telemetryDropped = Metric.counter("abhed_telemetry_dropped_total", {
  description: "spans, metric batches and log records not exported (collector down, slow or refusing; buffer full)",
  incremental: true
})

/** The host's metrics, for exporters and tests. */
export const HostMetrics = {
  dispatches,
  dispatchLatency,
  deaths,
  decisions,
  extensionLatency,
  telemetryDropped
} as const

// Built once per event, not per dispatch: a metric with attributes is a new key each time it is made. The event is
// a construction attribute rather than `Metric.withAttributes`: the same series (the key is made of the merged
// attributes either way), but `withAttributes` adds its attributes to a copy of the fiber's context on every update.
interface EventMetrics {
  readonly count: typeof dispatches
  /** `dispatchLatency`'s series for the event, updated in milliseconds (`latencyMillis`). */
  readonly latency: Metric.Metric<number, Metric.HistogramState>
  readonly span: string
}
export const metricsByEvent: Record<EventName, EventMetrics> = Object.fromEntries(
  EventNames.map((event): [EventName, EventMetrics] => [
    event,
    {
      count: dispatchesWith({ event }),
      latency: latencyHistogramWith({ event }),
      span: `abhed.${event}`
    }
  ])
) as Record<EventName, EventMetrics> // fromEntries over every EventName: the record is total

/** What a timer records for `Duration.nanos(nanos)`: `Duration.toMillis` of it, without the Duration. */
export const latencyMillis = (nanos: bigint): number => Number(nanos) / 1_000_000

/** What a timer records for `Duration.millis(ms)`: the same number for a whole one (-0 as 0), else effect's own. */
const durationMillis = (ms: number): number =>
  Number.isInteger(ms) ? (ms === 0 ? 0 : ms) : Duration.toMillis(Duration.millis(ms))

// Series made on first use and kept: extension names and verdicts are few (a config's), so these maps stay small.
// Looked up by the strings as they come (no key joined per update: the lookup hashes a string already hashed).
const latencyByExtension = new Map<string, Metric.Metric<number, Metric.HistogramState>>()
const decisionSeries = new Map<string, Map<string, Map<string, typeof decisions>>>()

/** One exchange's latency, under its extension's name. */
export const recordExtensionLatency = (extension: string, latencyMs: number, context: Context.Context<never>): void => {
  let metric = latencyByExtension.get(extension)
  if (metric === undefined) {
    metric = extensionLatencyHistogramWith({ extension })
    latencyByExtension.set(extension, metric)
  }
  metric.updateUnsafe(durationMillis(latencyMs), context)
}

/** One decision (an outcome with a `decision`), under its verdict and the extensions its reasons name. */
export const recordDecision = (
  event: EventName,
  decision: string,
  deciding: ReadonlyArray<string>,
  context: Context.Context<never>
): void => {
  if (deciding.length > 0) return decisionSeriesOf(event, decision, deciding.join(",")).updateUnsafe(1, context)
  // Nobody decided (most allows): one lookup, not three.
  const byDecision = undecidedSeries[event]
  let metric = byDecision.get(decision)
  if (metric === undefined) {
    metric = decisionSeriesOf(event, decision, "")
    byDecision.set(decision, metric)
  }
  metric.updateUnsafe(1, context)
}

/** Per event, the series of each decision no extension made (`extension: ""`), the same objects as in `decisionSeries`. */
const undecidedSeries = Object.fromEntries(
  EventNames.map((event): [EventName, Map<string, typeof decisions>] => [event, new Map()])
) as Record<EventName, Map<string, typeof decisions>> // fromEntries over every EventName: the record is total

const decisionSeriesOf = (event: EventName, decision: string, extension: string): typeof decisions => {
  let byDecision = decisionSeries.get(event)
  if (byDecision === undefined) {
    byDecision = new Map()
    decisionSeries.set(event, byDecision)
  }
  let byExtension = byDecision.get(decision)
  if (byExtension === undefined) {
    byExtension = new Map()
    byDecision.set(decision, byExtension)
  }
  let metric = byExtension.get(extension)
  if (metric === undefined) {
    metric = decisionsWith({ event, decision, extension })
    byExtension.set(extension, metric)
  }
  return metric
}
