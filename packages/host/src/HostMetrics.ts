import { type EventName, EventNames } from "@abhed/protocol"
import { Metric } from "effect"

/** The host's metrics (effect's own): dispatches and their latency per event, deaths per cause. */
type EventAttribute = { readonly event: EventName } | undefined
const dispatchesWith = (attributes: EventAttribute) =>
  Metric.counter("abhed_dispatch_total", { description: "events dispatched to extensions", incremental: true, attributes })
const latencyWith = (attributes: EventAttribute) =>
  Metric.timer("abhed_dispatch_latency", { description: "time to decide one event", attributes })
const dispatches = dispatchesWith(undefined)
const dispatchLatency = latencyWith(undefined)
const deaths = Metric.counter("abhed_extension_deaths_total", { description: "extensions marked dead", incremental: true })

/** The host's metrics, for exporters and tests. */
export const HostMetrics = { dispatches, dispatchLatency, deaths } as const

// Built once per event, not per dispatch: a metric with attributes is a new key each time it is made. The event is
// a construction attribute rather than `Metric.withAttributes`: the same series (the key is made of the merged
// attributes either way), but `withAttributes` adds its attributes to a copy of the fiber's context on every update.
interface EventMetrics {
  readonly count: typeof dispatches
  readonly latency: typeof dispatchLatency
  readonly span: string
  /** The span's options for a dispatch without a call id (built once). */
  readonly spanOptions: { readonly attributes: { readonly event: EventName } }
}
export const metricsByEvent: Record<EventName, EventMetrics> = Object.fromEntries(
  EventNames.map((event): [EventName, EventMetrics] => [event, {
    count: dispatchesWith({ event }),
    latency: latencyWith({ event }),
    span: `ExtensionHost.${event}`,
    spanOptions: { attributes: { event } }
  }])
) as Record<EventName, EventMetrics> // fromEntries over every EventName: the record is total
