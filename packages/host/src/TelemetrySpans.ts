import type { EventName } from "@abhed/protocol"
import { Clock, Context, Effect, Exit, type Fiber, Option, Tracer } from "effect"
import type { Exchange } from "./dispatch/Exchange.ts"
import { recordDecision, recordExtensionLatency } from "./HostMetrics.ts"
import { afterDecision } from "./AfterDecision.ts"
import { bareSpans } from "./TelemetryParent.ts"
import * as TelemetryTracer from "./TelemetryTracer.ts"
import { type DispatchFields, decidingOf, exchangeAttributes, outcomeSummary } from "./TelemetryRecord.ts"

/**
 * A dispatch's span and its exchanges' child spans (docs/observability.md): the span a dispatch runs in, the
 * decision count, and the child span per extension exchange of a round.
 */

const DispatchSpanOptions: Tracer.SpanOptionsNoTrace = { kind: "internal" }
const RootSpanOptions: Tracer.SpanOptionsNoTrace = { kind: "internal", root: true }

/**
 * Runs `body` in the dispatch's span `name`, the parent of everything the dispatch runs (policy hooks, logs), with
 * its event, session, tool and call id (the GenAI conventions' names where they have one). `useSpan` and the parent
 * span rather than `withSpan`, which also pushes a stack frame per dispatch: measured 2.1 -> 1.2 us per span. No
 * stack trace either (it costs more than the rest of the span); the span name says where it is. With effect's own
 * `nativeTracer` (no tracing backend installed) nothing can ever read the span, so there is none: effect documents
 * that comparison for skipping work only a backend could observe. With the exporting tracer, the attributes are
 * made when the span is sent (`TelemetryTracer.tagDispatch`), and a parent that is never sent is none: each dispatch
 * is then a trace of its own (`TelemetryTracer.unsentParent`). Such a root span is made straight, and ended without
 * an effect of its own, when nothing asks for more (`TelemetryTracer.rootSpan`); `bare` (no policy hook runs under
 * the dispatch) then keeps it out of the fiber's context (`TelemetryParent.ts`).
 */
export const withDispatchSpan = <A>(
  name: string,
  event: EventName,
  sessionId: string,
  callId: string | undefined,
  tool: string | undefined,
  body: (span: Tracer.Span | undefined) => Effect.Effect<A>,
  bare = false
): Effect.Effect<A> =>
  Effect.withFiber((fiber) => {
    const tracer = fiber.getRef(Tracer.Tracer)
    return tracer === Tracer.nativeTracer
      ? body(undefined)
      : dispatchSpan(fiber, tracer, name, { event, sessionId, callId, tool }, body, bare)
  })

/**
 * `withDispatchSpan` in a fiber the caller already holds, under a `tracer` other than `nativeTracer` it has read:
 * the dispatch's own path, one step fewer.
 */
export const dispatchSpan = <A>(
  fiber: Fiber.Fiber<unknown, unknown>,
  tracer: Tracer.Tracer,
  name: string,
  fields: DispatchFields,
  body: (span: Tracer.Span | undefined) => Effect.Effect<A>,
  bare: boolean
): Effect.Effect<A> => {
  const parent = fiber.cache.span
  const root = TelemetryTracer.unsentParent(tracer, parent)
  const span = parent === undefined || root ? TelemetryTracer.rootSpan(tracer, fiber, name) : undefined
  if (span === undefined)
    return Effect.useSpan(name, root ? RootSpanOptions : DispatchSpanOptions, (span) => {
      TelemetryTracer.tagDispatch(span, fields)
      return Effect.provideService(body(span), Tracer.ParentSpan, span)
    })
  TelemetryTracer.tagDispatch(span, fields)
  const clock = fiber.getRef(Clock.Clock)
  // Ended after the decision (AfterDecision.ts), at the time it ended: its record is tagged then too.
  span.endsLater = true
  const end = (exit: Exit.Exit<A>) => {
    const at = clock.currentTimeNanosUnsafe()
    afterDecision(() => span.end(at, exit))
  }
  if (!bare)
    return Effect.onExitPrimitive(Effect.provideService(body(span), Tracer.ParentSpan, span), (exit) => {
      end(exit)
      return undefined
    })
  // Not in the fiber's context (providing it copies the whole context and rebuilds the fiber's cache, ~2.5 µs of
  // p50, docs/benchmarks.md): in the fiber's slot, for the exchanges' child spans and `underDispatchSpan`.
  const previous = bareSpans.get(fiber)
  bareSpans.set(fiber, span)
  return Effect.onExitPrimitive(body(span), (exit) => {
    if (previous === undefined) bareSpans.delete(fiber)
    else bareSpans.set(fiber, previous)
    end(exit)
    return undefined
  })
}

/** A decided outcome's count in `abhed_decisions_total` (outcomes without a `decision` are not counted). */
export const countDecision = (event: EventName, outcome: unknown, context: Context.Context<never>): void => {
  const summary = outcomeSummary(outcome)
  if (summary.decision !== undefined) recordDecision(event, summary.decision, decidingOf(summary), context)
}

export const MillisToNanos = BigInt(1_000_000)

/**
 * A round's exchanges, observed once they are all back: each extension's latency in `abhed_extension_latency`, and,
 * when a tracer exports, a child span of the dispatch's per exchange (started with the round, ended after its
 * latency) with the extension's name, round, status, verdict, bounded reason, and failure by its shape. Under the
 * exporting tracer the child span is a plain record until it is sent (`TelemetryTracer.recordExchange`). Made as the
 * round starts (in the fiber that runs it, under the dispatch's span) and called with the round's exchanges in the
 * step that has them: the fan-out calls it in its own map, no effect of its own per round.
 */
export const roundObserver = (
  fiber: Fiber.Fiber<unknown, unknown>,
  round: number
): ((exchanges: ReadonlyArray<Exchange<EventName>>) => void) => {
  const clock = fiber.getRef(Clock.Clock)
  const tracer = fiber.getRef(Tracer.Tracer)
  const parent = tracer === Tracer.nativeTracer ? undefined : (bareSpans.get(fiber) ?? fiber.cache.span)
  const start = parent === undefined ? Zero : clock.currentTimeNanosUnsafe()
  // The exporting tracer's own child spans are plain records, pushed after the decision (AfterDecision.ts).
  const later = parent !== undefined && TelemetryTracer.recordsExchanges(tracer, parent)
  return (exchanges) => {
    const end = parent === undefined ? Zero : clock.currentTimeNanosUnsafe()
    if (later) {
      for (const x of exchanges) recordExtensionLatency(x.extension.name, x.latency_ms, fiber.context)
      if (parent.sampled)
        afterDecision(() => {
          for (const x of exchanges)
            TelemetryTracer.recordExchange(tracer, parent, x, round, start, endOf(start, x, end))
        })
      return
    }
    for (const x of exchanges) {
      recordExtensionLatency(x.extension.name, x.latency_ms, fiber.context)
      if (parent === undefined) continue
      const until = endOf(start, x, end)
      if (TelemetryTracer.recordExchange(tracer, parent, x, round, start, until)) continue
      const span = tracer.span({
        name: "abhed.extension",
        parent: Option.some(parent),
        annotations: Context.empty(),
        links: [],
        startTime: start,
        kind: "internal",
        root: false,
        sampled: parent.sampled
      })
      TelemetryTracer.deferAttributes(span, () => exchangeAttributes(x, round))
      span.end(until, Exit.void)
    }
  }
}
const Zero = BigInt(0)

/** An exchange's child span ends after its latency from the round's start, and no later than the round. */
const endOf = (start: bigint, x: Exchange<EventName>, roundEnd: bigint): bigint => {
  const after = start + BigInt(x.latency_ms) * MillisToNanos
  return after < roundEnd ? after : roundEnd
}
