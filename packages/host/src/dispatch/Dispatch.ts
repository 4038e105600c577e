import type { Finished, LayerPolicy, Named, PolicyHook } from "@abhed/core"
import {
  type EventName,
  isJsonObject,
  type JsonObject,
  type PolicyConfig,
  type ReplyOf,
  type RequestBody
} from "@abhed/protocol"
import { Clock, Effect, type Fiber, identity, Tracer } from "effect"
import type { AuditLog, AuditRound } from "../AuditLog.ts"
import type { AuditRecord } from "../AuditRecord.ts"
import { latencyMillis, metricsByEvent, recordDecision } from "../HostMetrics.ts"
import { afterDecision } from "../AfterDecision.ts"
import { isoTime } from "../IsoTime.ts"
import { countDecision, dispatchSpan } from "../TelemetrySpans.ts"
import { endsAfterDecision } from "../TelemetryTracer.ts"
import type { TelemetrySinkShape } from "../TelemetrySink.ts"
import type { Exchange } from "./Exchange.ts"
import { auditRound, fanOut, type RoundContext } from "./Round.ts"
import type { RecordedInput } from "../AuditRecord.ts"

/**
 * What every dispatch of one host shares, made once at startup and passed to each event's function: the audit
 * sink, the host's settings, and the counters. `seq` is a plain counter changed in one synchronous step (a Ref
 * was two Effect steps per dispatch for nothing).
 */
export interface DispatchContext extends RoundContext {
  readonly audit: AuditLog["Service"]
  /**
   * Does the sink keep records? `AuditLog.layerNone` does not: then no audit entry, round or note is built, and
   * `record` is never called (the outcome is all a dispatch makes).
   */
  readonly recording: boolean
  /** Telemetry's sink (`Telemetry.layer`), when on: it gets every record too, so the host records then. */
  readonly telemetry?: TelemetrySinkShape | undefined
  readonly sessionId: string
  readonly policy: PolicyConfig
  /** One policy per config layer, joined; when given, used instead of `policy`. */
  readonly policies: ReadonlyArray<LayerPolicy> | undefined
  readonly hooks: ReadonlyArray<PolicyHook>
  readonly maxRounds: number
  readonly builtin: ReadonlyArray<string>
  readonly callIdOf: (given: string | undefined) => string
  seq: number
}

/** What a tool event's audit record names: the tool, and the args as the agent passed them. */
export interface AuditSubject {
  readonly tool: string
  readonly args?: JsonObject
}

export interface Dispatched<A> {
  readonly outcome: A
  /** Empty when not recording. */
  readonly rounds: ReadonlyArray<AuditRound>
  /** Empty when not recording. */
  readonly notes: ReadonlyArray<string>
  /** What came in, for the record, when an extension acted on it (AuditRecord's `input`); absent when not recording. */
  readonly input?: RecordedInput
}

/**
 * An outcome whose decision no extension made (no reasons, nothing withheld: an allow, most of the time): its count
 * needs neither the telemetry summary (`countDecision`, ~0.35 µs of arrays, a Set and strings) nor anyone's name.
 */
const decidedByNobody = (outcome: unknown): outcome is { readonly decision: string } =>
  isJsonObject(outcome) &&
  typeof outcome["decision"] === "string" &&
  isEmptyList(outcome["reasons"]) &&
  isEmptyList(outcome["withheld"])
const isEmptyList = (value: unknown): boolean => value === undefined || (Array.isArray(value) && value.length === 0)

/**
 * A dispatch's audit record, its fields in the order they are written. A tool event with its args and no input (most
 * dispatches) as one literal: spreads in the middle of a literal copy through the runtime, on every dispatch.
 */
const recordOf = (
  ctx: DispatchContext,
  seq: number,
  start: number,
  event: EventName,
  call_id: string | undefined,
  subject: AuditSubject | undefined,
  rounds: ReadonlyArray<AuditRound>,
  outcome: unknown,
  input: RecordedInput | undefined,
  notes: ReadonlyArray<string>,
  end: number
): AuditRecord => {
  const session_id = ctx.sessionId
  const time = isoTime(start)
  const duration_ms = end - start
  if (subject !== undefined && "args" in subject && input === undefined) {
    const { args, tool } = subject
    return { seq, session_id, time, event, call_id, tool, args, rounds, outcome, notes, duration_ms }
  }
  return {
    seq,
    session_id,
    time,
    event,
    call_id,
    ...subject,
    rounds,
    outcome,
    ...(input === undefined ? {} : { input }),
    notes,
    duration_ms
  }
}

/**
 * A dispatch's work, given what to make of its result (`then`), to be called in the body's own last step: the
 * dispatch's metrics are updated there, not in a step of their own.
 */
export type Body<A> = <B>(then: (dispatched: Dispatched<A>) => B) => Effect.Effect<B>

/**
 * Runs one dispatch with its span, metrics and audit record. No generator: the sequence number is a plain
 * counter, the clock is read once at each end (monotonic for the latency metric, as `trackDuration` does; the wall
 * clock only for the record), the metrics are updated in the body's last step, and the record is built and written
 * only when the sink keeps it.
 */
export const dispatch = <A>(
  ctx: DispatchContext,
  event: EventName,
  callId: string | undefined,
  body: Body<A>,
  subject?: AuditSubject
): Effect.Effect<A> => {
  const metrics = metricsByEvent[event]
  // `fiber` is the dispatch's own: its context when `done` runs is the one the body ran in (a span's included).
  const timed = (fiber: Fiber.Fiber<unknown, unknown>, span: Tracer.Span | undefined): Effect.Effect<A> => {
    const clock = fiber.getRef(Clock.Clock)
    const n = ctx.seq++
    const startNanos = clock.monotonicTimeNanosUnsafe()
    const done = (outcome: A): A => {
      const context = fiber.context
      metrics.latency.updateUnsafe(latencyMillis(clock.monotonicTimeNanosUnsafe() - startNanos), context)
      metrics.count.updateUnsafe(1, context)
      if (decidedByNobody(outcome)) recordDecision(event, outcome.decision, [], context)
      else countDecision(event, outcome, context)
      return outcome
    }
    // Not recording (the common case): the metrics in the body's last step.
    if (!ctx.recording) return body((dispatched) => done(dispatched.outcome))
    const start = clock.currentTimeMillisUnsafe()
    const { telemetry } = ctx
    // Telemetry's own sink, with no span or one that ends after the decision too: the record is handed over after
    // the decision (AfterDecision.ts), and built then unless the audit needs it now.
    const later = telemetry?.afterDecision === true && (span === undefined || endsAfterDecision(span))
    if (later && ctx.audit.enabled === false) {
      // Telemetry alone records: in the body's last step, as when not recording.
      return body(({ input, notes, outcome, rounds }) => {
        const end = clock.currentTimeMillisUnsafe()
        afterDecision(() =>
          telemetry.record(recordOf(ctx, n, start, event, callId, subject, rounds, outcome, input, notes, end), span)
        )
        return done(outcome)
      })
    }
    return Effect.flatMap(body(identity), ({ input, notes, outcome, rounds }) => {
      const end = clock.currentTimeMillisUnsafe()
      const record = recordOf(ctx, n, start, event, callId, subject, rounds, outcome, input, notes, end)
      if (later) afterDecision(() => telemetry.record(record, span))
      else if (telemetry !== undefined) {
        try {
          telemetry.record(record, span)
        } catch {
          // A record telemetry cannot take (an embedder's value JSON cannot hold) is lost to it alone.
        }
      }
      // A sink that keeps nothing (telemetry alone records): no effect of its own on the dispatch's path.
      return ctx.audit.enabled === false
        ? Effect.succeed(done(outcome))
        : Effect.andThen(
            ctx.audit.record(record),
            Effect.sync(() => done(outcome))
          )
    })
  }
  // With effect's own `nativeTracer` (no tracing backend) there is no span (`withDispatchSpan`): checked here, in the
  // dispatch's one step before its body. No policy hook: nothing under the dispatch but the host's own code reads the
  // parent span.
  return Effect.withFiber((fiber) => {
    const tracer = fiber.getRef(Tracer.Tracer)
    return tracer === Tracer.nativeTracer
      ? timed(fiber, undefined)
      : dispatchSpan(
          fiber,
          tracer,
          metrics.span,
          { event, sessionId: ctx.sessionId, callId, tool: subject?.tool },
          // The same fiber runs the body: its context when `done` runs has the span, where one is provided.
          (span) => timed(fiber, span),
          ctx.hooks.length === 0
        )
  })
}

/**
 * Input the host cannot send (docs/design.md#failures): recorded as a dispatch that reached no extension, answered
 * with the event's fail-closed outcome and notes (`refused`, from the event's rule in core). The agent's value goes
 * nowhere, the audit included.
 */
export const refuse = <A>(
  ctx: DispatchContext,
  event: EventName,
  callId: string | undefined,
  refused: Finished<A>,
  tool?: string
): Effect.Effect<A> =>
  dispatch(
    ctx,
    event,
    callId,
    (then) =>
      Effect.sync(() => then({ outcome: refused.outcome, rounds: [], notes: ctx.recording ? refused.notes : [] })),
    tool === undefined ? undefined : { tool }
  )

/** A single-round event: fan out once, combine the replies in name order (the failed exchanges too, if wanted). */
export const single = <E extends EventName, A>(
  ctx: DispatchContext,
  event: E,
  value: RequestBody<E>,
  combine: (
    replies: ReadonlyArray<Named<ReplyOf<E>>>,
    exchanges: ReadonlyArray<Exchange<E>>
  ) => { readonly outcome: A; readonly notes: ReadonlyArray<string>; readonly input?: RecordedInput },
  except?: ReadonlySet<string>
) =>
  dispatch<A>(ctx, event, undefined, (then) =>
    fanOut(ctx, event, value, except, ({ exchanges, skipped }) => {
      const replies: Array<Named<ReplyOf<E>>> = []
      for (const x of exchanges) if (x.reply !== undefined) replies.push({ name: x.extension.name, value: x.reply })
      const { input, notes, outcome } = combine(replies, exchanges)
      if (!ctx.recording) return then({ outcome, rounds: [], notes: [] })
      const rounds = [auditRound(1, exchanges, skipped)]
      return then(input === undefined ? { outcome, rounds, notes } : { outcome, rounds, notes, input })
    })
  )
