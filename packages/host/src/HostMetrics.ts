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
const latencyWith = (attributes: EventAttribute) =>
  Metric.timer("abhed_dispatch_latency", { description: "time to decide one event", attributes })
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
const extensionLatencyWith = (attributes: { readonly extension: string } | undefined) =>
  Metric.timer("abhed_extension_latency", { description: "one extension's time to answer one request", attributes })
const extensionLatency = extensionLatencyWith(undefined)
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
  readonly latency: typeof dispatchLatency
  readonly span: string
}
export const metricsByEvent: Record<EventName, EventMetrics> = Object.fromEntries(
  EventNames.map((event): [EventName, EventMetrics] => [
    event,
    {
      count: dispatchesWith({ event }),
      latency: latencyWith({ event }),
      span: `abhed.${event}`
    }
  ])
) as Record<EventName, EventMetrics> // fromEntries over every EventName: the record is total

// Series made on first use and kept: extension names and verdicts are few (a config's), so these maps stay small.
const latencyByExtension = new Map<string, typeof extensionLatency>()
const decisionSeries = new Map<string, typeof decisions>()

/** One exchange's latency, under its extension's name. */
export const recordExtensionLatency = (extension: string, latencyMs: number, context: Context.Context<never>): void => {
  let metric = latencyByExtension.get(extension)
  if (metric === undefined) {
    metric = extensionLatencyWith({ extension })
    latencyByExtension.set(extension, metric)
  }
  metric.updateUnsafe(Duration.millis(latencyMs), context)
}

/** One decision (an outcome with a `decision`), under its verdict and the extensions its reasons name. */
export const recordDecision = (
  event: EventName,
  decision: string,
  deciding: ReadonlyArray<string>,
  context: Context.Context<never>
): void => {
  const extension = deciding.join(",")
  const key = `${event}\u0000${decision}\u0000${extension}`
  let metric = decisionSeries.get(key)
  if (metric === undefined) {
    metric = decisionsWith({ event, decision, extension })
    decisionSeries.set(key, metric)
  }
  metric.updateUnsafe(1, context)
}
