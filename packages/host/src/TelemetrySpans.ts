import type { EventName } from "@abhed/protocol"
import { Clock, Context, Effect, Exit, Option, Tracer } from "effect"
import type { Exchange } from "./dispatch/Exchange.ts"
import { recordDecision, recordExtensionLatency } from "./HostMetrics.ts"
import * as TelemetryTracer from "./TelemetryTracer.ts"
import { bounded, decidingOf, outcomeSummary, reasonOf, verdictOf } from "./TelemetryRecord.ts"

/**
 * A dispatch's span and its exchanges' child spans (docs/observability.md): the options a dispatch opens its span
 * with, the decision count, and the child span per extension exchange of a round.
 */

/** The span options of a dispatch: its event, session, tool and call id (the GenAI conventions' names where they have one). */
export const dispatchSpanOptions = (
  event: EventName,
  sessionId: string,
  callId: string | undefined,
  tool: string | undefined
): Tracer.SpanOptionsNoTrace => {
  const attributes: Record<string, unknown> = { "abhed.event": event, "gen_ai.conversation.id": sessionId }
  if (callId !== undefined) attributes["gen_ai.tool.call.id"] = callId
  if (tool !== undefined) {
    attributes["gen_ai.tool.name"] = tool
    attributes["gen_ai.operation.name"] = "execute_tool"
  }
  return { attributes, kind: "internal" }
}

/** A decided outcome's count in `abhed_decisions_total` (outcomes without a `decision` are not counted). */
export const countDecision = (event: EventName, outcome: unknown, context: Context.Context<never>): void => {
  const summary = outcomeSummary(outcome)
  if (summary.decision !== undefined) recordDecision(event, summary.decision, decidingOf(summary), context)
}

export const MillisToNanos = BigInt(1_000_000)

/** An exchange's child span's attributes: worked out when the span is sent. */
const exchangeAttributes = (x: Exchange<EventName>, round: number): Record<string, unknown> => {
  const out: Record<string, unknown> = {
    "abhed.extension.name": x.extension.name,
    "abhed.round": round,
    "abhed.extension.status": x.status,
    "abhed.extension.latency_ms": x.latency_ms
  }
  if (x.reply !== undefined) {
    out["abhed.extension.verdict"] = verdictOf(x.reply)
    const reason = reasonOf(x.reply)
    if (reason !== undefined) out["abhed.extension.reason"] = reason
  }
  if (x.error !== undefined) {
    out["abhed.extension.error"] = bounded(x.error)
    out["abhed.extension.on_failure"] = x.extension.config.on_failure
  }
  return out
}

/**
 * A round's exchanges, observed once they are all back: each extension's latency in `abhed_extension_latency`, and,
 * when a tracer exports, a child span of the dispatch's per exchange (started with the round, ended after its
 * latency) with the extension's name, round, status, verdict, bounded reason, and failure by its shape.
 */
export const observeRound = <A extends { readonly exchanges: ReadonlyArray<Exchange<EventName>> }>(
  round: number,
  effect: Effect.Effect<A>
): Effect.Effect<A> =>
  Effect.withFiber((fiber) => {
    const clock = fiber.getRef(Clock.Clock)
    const tracer = fiber.getRef(Tracer.Tracer)
    const parent = tracer === Tracer.nativeTracer ? undefined : fiber.cache.span
    const start = parent === undefined ? BigInt(0) : clock.currentTimeNanosUnsafe()
    return Effect.map(effect, (result) => {
      const end = parent === undefined ? BigInt(0) : clock.currentTimeNanosUnsafe()
      for (const x of result.exchanges) {
        recordExtensionLatency(x.extension.name, x.latency_ms, fiber.context)
        if (parent === undefined) continue
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
        const after = start + BigInt(x.latency_ms) * MillisToNanos
        span.end(after < end ? after : end, Exit.void)
      }
      return result
    })
  })
