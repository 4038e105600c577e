import { Cause, Context, Deferred, Duration, Effect, type Layer, Metric } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpBody from "effect/http/HttpBody"
import { type OtlpLogger, OtlpSerialization, type OtlpTracer } from "effect/observability"
import { HostMetrics } from "./HostMetrics.ts"
import { makeAgents, post } from "./TelemetryHttp.ts"
import type { OtlpProtocol, Signal } from "./TelemetryConfig.ts"

/**
 * The transport under effect's OTLP exporters, made so that a collector can never get in the way of a decision:
 * at most `MaxInFlight` requests in flight per signal (a batch that finds that many is dropped, not queued: memory
 * stays bounded by `MaxInFlight` + 1 batches a signal), each request bounded by the timeout, and a collector that is down, slow or refusing
 * (any non-2xx) costs the batch, never a retry, a wait or an error. What is dropped is counted, item by item, in
 * `abhed_telemetry_dropped_total` and in `ExportStats`.
 */
export interface ExportStats {
  readonly sent: Record<Signal, number>
  readonly dropped: Record<Signal, number>
  /** The first failure, for one warning: `traces: HTTP 500`. */
  firstFailure: string | undefined
  /** Some batch was dropped because the signal's previous one was still in flight. */
  inFlightDrops: boolean
  /** Set once the session's end has flushed: anything later is dropped at once. */
  closed: boolean
  /** The session's end's last flush ran to its end (within the timeout): every signal's last batch had its turn. */
  flushed: boolean
}

export const makeStats = (): ExportStats => ({
  sent: { traces: 0, metrics: 0, logs: 0 },
  dropped: { traces: 0, metrics: 0, logs: 0 },
  firstFailure: undefined,
  inFlightDrops: false,
  closed: false,
  flushed: false
})

interface Batch {
  readonly signal: Signal
  readonly items: number
}

/** Which body is which signal's batch of how many items: filled by the serialization, read by the transport. */
export type Batches = WeakMap<HttpBody.HttpBody, Batch>

const serviceOf = (layer: Layer.Layer<OtlpSerialization.OtlpSerialization>) =>
  Effect.provide(
    Effect.gen(function* () {
      return yield* OtlpSerialization.OtlpSerialization
    }),
    layer
  )

/** A batch's body in its signal's protocol: protobuf as written by the host (`protobuf`), else effect's OTLP/JSON. */
export interface Encode {
  readonly traces: (items: number, protobuf: () => Uint8Array, json: () => OtlpTracer.TraceData) => HttpBody.HttpBody
  readonly logs: (items: number, protobuf: () => Uint8Array, json: () => OtlpLogger.LogsData) => HttpBody.HttpBody
}

/**
 * effect's own serialization for each signal's protocol (the metrics', once per interval whatever the load), and
 * the encoder of the traces' and logs' batches (one a second or more, written straight from the host's spans and
 * records: TelemetryProtobuf.ts), both noting each body's signal and item count.
 */
export const serialization = (protocol: { readonly [S in Signal]: OtlpProtocol }, batches: Batches) =>
  Effect.gen(function* () {
    const byProtocol = {
      "http/json": yield* serviceOf(OtlpSerialization.layerJson),
      "http/protobuf": yield* serviceOf(OtlpSerialization.layerProtobuf)
    }
    const pick = (signal: Signal) => byProtocol[protocol[signal]]
    const noted = (signal: Signal, body: HttpBody.HttpBody, items: number) => {
      batches.set(body, { signal, items })
      return body
    }
    const protobuf = (bytes: Uint8Array) => HttpBody.uint8Array(bytes, "application/x-protobuf")
    const encode: Encode = {
      traces: (items, bytes, json) =>
        noted(
          "traces",
          protocol.traces === "http/protobuf" ? protobuf(bytes()) : byProtocol["http/json"].traces(json()),
          items
        ),
      logs: (items, bytes, json) =>
        noted(
          "logs",
          protocol.logs === "http/protobuf" ? protobuf(bytes()) : byProtocol["http/json"].logs(json()),
          items
        )
    }
    // The metrics' exporter is effect's, and reads the service; the traces and logs never go through it.
    const service = OtlpSerialization.OtlpSerialization.of({
      ...pick("metrics"),
      metrics: (data) => noted("metrics", pick("metrics").metrics(data), 1)
    })
    return { service, encode }
  })

/** What the exporters are told of every request: it went well (no body: one answer serves them all). */
let okAnswer: Response | undefined
const ok = (request: Parameters<typeof HttpClientResponse.fromWeb>[0]) =>
  HttpClientResponse.fromWeb(request, (okAnswer ??= new Response(null, { status: 200 })))

/** The buffers' hand-overs due, all in one turn of the event loop (one `setImmediate` a dispatch, not one a signal). */
let due: Array<() => void> = []
const runDue = () => {
  const now = due
  due = []
  for (const drain of now) drain()
}
const handOver = (drain: () => void) => {
  if (due.push(drain) === 1) setImmediate(runDue)
}

/**
 * A signal's buffer, bounded: at most `cap` items wait to be sent, and an item that finds it full is dropped and
 * counted. effect's exporter serializes and sends the batch that fills up in the fiber that pushes, which must not be
 * a dispatch: the item that would fill it reaches the exporter in a turn of the event loop of its own. Given the
 * exporter's batch size (`connect`), the items before it go straight (the exporter holds `handed - taken` of them: it
 * takes all it holds at each export): no turn of the event loop per dispatch.
 */
export const boundedBuffer = <A>(signal: Signal, cap: number, stats: ExportStats) => {
  let waiting = 0
  let pending: Array<A> = []
  let push: (item: A) => void = () => {}
  let batchSize = 0
  /** Items in the exporter's own buffer (handed over, not yet taken). */
  let held = 0
  const drain = () => {
    const items = pending
    pending = []
    held += items.length
    for (const item of items) push(item)
  }
  return {
    /** Set once the exporter exists; `batch`: its batch size, for items that cannot fill it to go straight. */
    connect: (exporterPush: (item: unknown) => void, batch?: number) => {
      push = exporterPush
      batchSize = batch ?? 0
    },
    push: (item: A): void => {
      if (waiting >= cap) {
        stats.dropped[signal] += 1
        stats.inFlightDrops = true
        Metric.withAttributes(HostMetrics.telemetryDropped, { signal }).updateUnsafe(1, Context.empty())
        return
      }
      waiting++
      if (pending.length === 0 && held + 1 < batchSize) {
        held++
        push(item)
      } else if (pending.push(item) === 1) handOver(drain)
    },
    /** Hands over what waits now (before a flush). */
    drain,
    /** The exporter took `n` items for a request. */
    taken: (n: number): void => {
      waiting = Math.max(0, waiting - n)
      held = Math.max(0, held - n)
    }
  }
}

/** Why a request failed, in the words of its error (`connect ECONNREFUSED 127.0.0.1:4318`), for the one warning. */
const failureText = (cause: Cause.Cause<unknown>): string =>
  (Cause.prettyErrors(cause)[0]?.message ?? String(cause)).split("\n")[0] ?? ""

/** Requests in flight per signal: a batch that finds this many is dropped, so a signal holds at most one more. */
export const MaxInFlight = 4

/**
 * The bounded, never-failing transport (see above), over node's HTTP client (`post`); `whenIdle` waits for the
 * requests in flight (the session's end waits for them before its last flush, within the same bound). Its sockets
 * are closed when the layer's scope is.
 */
export const transport = (timeout: Duration.Input, batches: Batches, stats: ExportStats) =>
  Effect.map(
    Effect.acquireRelease(Effect.sync(makeAgents), (agents) =>
      Effect.sync(() => {
        agents.http.destroy()
        agents.https.destroy()
      })
    ),
    (agents) => {
      const send = post(agents)
      const inFlight: Record<Signal, Set<Deferred.Deferred<void>>> = {
        traces: new Set(),
        metrics: new Set(),
        logs: new Set()
      }
      const dropped = (batch: Batch | undefined, why: string, collector = true) =>
        Effect.withFiber((fiber) => {
          if (batch === undefined) return Effect.void
          stats.dropped[batch.signal] += batch.items
          // The collector's own failure is what the warning names: a batch dropped for one in flight follows from it.
          if (collector) stats.firstFailure ??= `${batch.signal}: ${why}`
          else stats.inFlightDrops = true
          Metric.withAttributes(HostMetrics.telemetryDropped, { signal: batch.signal }).updateUnsafe(
            batch.items,
            fiber.context
          )
          return Effect.void
        })
      const client = HttpClient.make((request, url, signal) => {
        const batch = request.body._tag === "Empty" ? undefined : batches.get(request.body)
        if (stats.closed)
          // The metrics exporter's own last export repeats the cumulative totals the last flush sent (or counted as
          // not sent): no loss, once that flush ran.
          return batch?.signal === "metrics" && stats.flushed
            ? Effect.succeed(ok(request))
            : Effect.as(dropped(batch, "after the session's end"), ok(request))
        if (batch !== undefined && inFlight[batch.signal].size >= MaxInFlight) {
          return Effect.as(dropped(batch, `${MaxInFlight} batches were still in flight`, false), ok(request))
        }
        const done = Deferred.makeUnsafe<void>()
        if (batch !== undefined) inFlight[batch.signal].add(done)
        return send(request, url, signal).pipe(
          Effect.flatMap((status) =>
            status >= 200 && status < 300
              ? Effect.sync(() => {
                  if (batch !== undefined) stats.sent[batch.signal] += batch.items
                })
              : dropped(batch, `HTTP ${status}`)
          ),
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () => dropped(batch, `no answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}`)
          }),
          Effect.catchCause((cause) => dropped(batch, `unreachable (${failureText(cause)})`)),
          // Still in flight when the session's end gave up on it.
          Effect.onInterrupt(() => dropped(batch, "cut off at the session's end")),
          Effect.ensuring(
            Effect.suspend(() => {
              if (batch !== undefined) inFlight[batch.signal].delete(done)
              return Deferred.succeed(done, undefined)
            })
          ),
          Effect.as(ok(request))
        )
      })
      const whenIdle = Effect.suspend(() =>
        Effect.forEach([...inFlight.traces, ...inFlight.metrics, ...inFlight.logs], Deferred.await, { discard: true })
      )
      return { client, whenIdle }
    }
  )
