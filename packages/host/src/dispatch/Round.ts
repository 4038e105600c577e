import {
  EventNames,
  Framing,
  type DecodedReply,
  type EventName,
  type Request,
  type RequestBody,
  type WithId
} from "@abhed/protocol"
import { Cause, Clock, Effect, Exit, Result, Tracer } from "effect"
import { mergeByName, roundAudience, type RoundAudience } from "../Audience.ts"
import type { AuditExchange, AuditRound } from "../AuditLog.ts"
import type { EncodedRequest, Extension, StartedExchange } from "../Extension.ts"
import type { ExtensionError } from "../ExtensionError.ts"
import { recordExtensionLatency } from "../HostMetrics.ts"
import * as IdCounter from "../IdCounter.ts"
import { underDispatchSpan } from "../TelemetryParent.ts"
import { roundObserver } from "../TelemetrySpans.ts"
import { auditOf, exchange, failed, replied, repliedSaid, type Exchange } from "./Exchange.ts"

/**
 * What every round of one host shares, made once at startup and passed to each round (no closure per dispatch):
 * the deaths already reported, who gets each event, and the round ids.
 */
export interface RoundContext {
  readonly reported: Set<string>
  readonly audience: Record<EventName, RoundAudience>
  readonly nextId: () => string
}

/** `extensions` must be in name order. */
export const makeRoundContext = (extensions: ReadonlyArray<Extension>): RoundContext => ({
  reported: new Set<string>(),
  // Who gets each event, worked out once as far as the payload does not matter (matchers: per round).
  audience: Object.fromEntries(
    EventNames.map((event): [EventName, RoundAudience] => [event, roundAudience(extensions, event)])
  ) as Record<EventName, RoundAudience>, // fromEntries over every EventName: the record is total
  // Round ids (docs/design.md#wire-protocol): one per round of every dispatch, the same for all of the round's
  // subscribers.
  nextId: IdCounter.make()
})

/** One round's request, encoded once with a fresh round id: the same bytes go to every subscriber. */
export function encodeRound<E extends EventName>(ctx: RoundContext, event: E, body: RequestBody<E>): EncodedRequest<E>
export function encodeRound(ctx: RoundContext, event: EventName, body: RequestBody<EventName>): EncodedRequest {
  const value: WithId<Request> = { ...body, id: ctx.nextId() }
  return { event, value, bytes: Framing.encodeLine(value) }
}

/** Requests of settling rounds after the first carry `round` (docs/design.md#combination); the first has none. */
export const roundField = (round: number): { readonly round?: number } => (round > 1 ? { round } : {})

/**
 * A round's exchanges without a fiber per subscriber: every exchange is begun at once (`Extension.beginNow`: the
 * write happens where the request becomes the one in flight, as in `send`), and one callback waits for all of them.
 * Checking, beginning and listening are one synchronous step (the callback's registration): an interrupted caller
 * either began nothing or abandons every exchange, which runs on and keeps its permit until its reply, as `send`'s
 * hand-off does (and counts as orphaned for the close sequence). When some subscriber cannot begin now (no
 * `beginNow`, or its permit is taken: its requests queue FIFO in `send`), nothing is begun and the round runs
 * `exchange`s instead: in this fiber for one subscriber, a fiber each for several. One subscriber takes this path
 * too: one callback rather than `send`'s mask, deferred and matches (~4 effect steps a dispatch). Exchanges stay in
 * subscriber (name) order. `clock` is the caller's fiber's.
 */
export const exchanges = <E extends EventName>(
  subscribers: ReadonlyArray<Extension>,
  request: EncodedRequest<E>,
  reported: Set<string>,
  clock: Clock.Clock
): Effect.Effect<ReadonlyArray<Exchange<E>>> =>
  Effect.callback<ReadonlyArray<Exchange<E>>>((resume) => {
    if (subscribers.length === 0) return resume(Effect.succeed([]))
    for (const x of subscribers) if (x.idle?.() !== true) return resume(oneByOne(subscribers, request, reported))
    const start = clock.currentTimeMillisUnsafe()
    const started: Array<StartedExchange<E> | undefined> = subscribers.map((x) => x.beginNow?.(request))
    const exits: Array<Exit.Exit<DecodedReply<E>, ExtensionError> | undefined> = started.map(() => undefined)
    const latencies: Array<number> = started.map(() => 0)
    let left = started.length
    started.forEach((x, i) => {
      const done = (exit: Exit.Exit<DecodedReply<E>, ExtensionError>) => {
        exits[i] = exit
        latencies[i] = clock.currentTimeMillisUnsafe() - start
        if (--left === 0) resume(records(subscribers, request.event, exits, latencies, reported))
      }
      if (x === undefined) done(Exit.die(new Error(`extension ${subscribers[i]?.name} could not begin an exchange`)))
      else x.onDone(done)
    })
    return Effect.sync(() => started.forEach((x) => x?.abandon()))
  })

/** The exchanges of a round whose subscribers cannot all begin now: `send` for each, waiting its turn. */
const oneByOne = <E extends EventName>(
  subscribers: ReadonlyArray<Extension>,
  request: EncodedRequest<E>,
  reported: Set<string>
): Effect.Effect<ReadonlyArray<Exchange<E>>> => {
  const only = subscribers.length === 1 ? subscribers[0] : undefined
  if (only !== undefined) return Effect.map(exchange(only, request, reported), (x) => [x])
  // Forked: each fiber's context carries the dispatch's span (`underDispatchSpan`).
  return underDispatchSpan(
    Effect.forEach(subscribers, (x) => exchange(x, request, reported), { concurrency: "unbounded" })
  )
}

/** The records of a round begun at once, from how each exchange ended. */
const records = <E extends EventName>(
  subscribers: ReadonlyArray<Extension>,
  event: E,
  exits: ReadonlyArray<Exit.Exit<DecodedReply<E>, ExtensionError> | undefined>,
  latencies: ReadonlyArray<number>,
  reported: Set<string>
): Effect.Effect<ReadonlyArray<Exchange<E>>> => {
  // Every exchange replied (the common case): the records in one synchronous step, not an effect per exchange.
  const out: Array<Exchange<E>> = []
  for (let i = 0; i < exits.length; i++) {
    const exit = exits[i]
    const extension = subscribers[i]
    if (exit === undefined || extension === undefined || Exit.isFailure(exit) || exit.value.failed !== undefined) break
    out.push(replied(extension, exit.value, latencies[i] ?? 0))
  }
  if (out.length === exits.length) return Effect.succeed(out)
  return Effect.forEach(exits, (exit, i): Effect.Effect<Exchange<E>> => {
    const extension = subscribers[i]
    if (exit === undefined || extension === undefined) return Effect.die(new Error("fan-out: an exchange did not end"))
    if (Exit.isSuccess(exit)) return repliedSaid(extension, event, exit.value, latencies[i] ?? 0)
    const error = Cause.findError(exit.cause)
    // A defect is not an extension's failure: it goes on, as from `exchange`.
    return Result.isSuccess(error)
      ? failed(extension, error.success, latencies[i] ?? 0, reported)
      : Effect.failCause(error.failure)
  })
}

/** A round's exchanges, and the extensions it skipped (for its audit entry). */
export interface RoundResult<E extends EventName> {
  readonly exchanges: ReadonlyArray<Exchange<E>>
  readonly skipped: ReadonlyArray<AuditExchange>
}

/**
 * One round: the request is encoded once and the same bytes go to every subscriber, all in parallel.
 * Non-subscribers appear in the audit as `not_subscribed`; subscribers whose `match` rules miss this round's
 * call as `not_matched` (the audience is recomputed per round: a rewrite may bring a matcher in).
 *
 * A parallel `Effect.forEach`, not `Stream.mapEffect`: measured on one in-process fake, the Stream version cost
 * 44 µs per dispatch against 23 µs, a third of the whole per-dispatch budget (docs/benchmarks.md). Replies are
 * combined by commutative Reducers, so collecting them first and folding in name order gives the same outcome.
 * No generator, and one subscriber forks nothing.
 */
export const fanOut = <E extends EventName, B>(
  ctx: RoundContext,
  event: E,
  body: RequestBody<E>,
  except: ReadonlySet<string> | undefined,
  /** What the caller makes of the round, in the round's own last step. */
  then: (round: RoundResult<E>) => B
): Effect.Effect<B> =>
  Effect.withFiber((fiber) => {
    const { reported } = ctx
    const request = encodeRound(ctx, event, body)
    const heard = ctx.audience[event](request.value)
    const { skipped } = heard
    const subscribers = except === undefined ? heard.subscribers : heard.subscribers.filter((x) => !except.has(x.name))
    // With a tracer that exports, `roundObserver` adds a child span per exchange. Without one (export off) only the
    // latencies are recorded, in the step that has the replies: a wrapper around the round (a fiber read, one more map
    // and its closures) was part of what had made a dispatch over 8 fakes ~19% dearer in CPU than before the
    // host's split (docs/benchmarks.md). Observed in the map that has the replies: no effect of its own per round.
    const observe =
      fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer
        ? undefined
        : roundObserver(fiber, "round" in body && typeof body.round === "number" ? body.round : 1)
    // Exchanges stay in subscriber order, and subscribers are in name order: so are the exchanges.
    return Effect.map(exchanges(subscribers, request, reported, fiber.getRef(Clock.Clock)), (xs) => {
      if (observe !== undefined) observe(xs)
      else for (const x of xs) recordExtensionLatency(x.extension.name, x.latency_ms, fiber.context)
      return then({ exchanges: xs, skipped })
    })
  })

/** A round's audit entry (only when recording). */
export const auditRound = (
  round: number,
  exchanges: ReadonlyArray<Exchange<EventName>>,
  skipped: ReadonlyArray<AuditExchange>
): AuditRound => ({
  round,
  // Both lists are in name order (see Audience): a merge, not a sort, on every round; none skipped, no merge.
  exchanges: skipped.length === 0 ? exchanges.map(auditOf) : mergeByName(exchanges.map(auditOf), skipped)
})
