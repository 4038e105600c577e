import {
  ask as askVerdict,
  combineCompact,
  combineKeep,
  combineSystem,
  combineTools,
  decide,
  deny as denyVerdict,
  evaluateLayerPolicies,
  evaluatePolicy,
  evaluateRules,
  fromToolCallReply,
  HostReasonName,
  IsErrorReducer,
  join,
  none,
  settleEffect,
  sortByName,
  unsettledReason,
  VerdictReducer,
  type AcceptedTool,
  type LayerPolicy,
  type Named,
  type PolicyDecision,
  type PolicyHook,
  type SettleOutcome,
  type Reason,
  type RejectionReason,
  type RoundReply,
  type Verdict
} from "@abhed/core"
import {
  Defaults,
  EventNames,
  Framing,
  shapeJson,
  ToolNameRule,
  unsendableField,
  type Config,
  type DecodedReply,
  type EventName,
  type JsonObject,
  type PolicyConfig,
  type ReplyOf,
  type Request,
  type WithId,
  type RequestBody,
  type RequestOf
} from "@abhed/protocol"
import { Cause, Clock, Context, Duration, Effect, Exit, type FileSystem, Layer, Metric, type Path, Result, Scope, Tracer } from "effect"
import { AuditLog, type AuditExchange, type AuditRound, type ExchangeStatus } from "./AuditLog.ts"
import { type ConfigInvalid, type ConfigUnreadable, loadConfig } from "./ConfigLoader.ts"
import { mergeByName, roundAudience, type RoundAudience } from "./Audience.ts"
import type { EncodedRequest, Extension, ExtensionStatus, StartedExchange } from "./Extension.ts"
import * as ProcessExtension from "./ProcessExtension.ts"
import { describeDeathCause, describeDeathCauseWithStderr, deathCauseOf, type ExtensionError } from "./ExtensionError.ts"
import { DuplicateExtensionNames, ToolOwnerUnavailable, UnknownTool } from "./HostError.ts"
import * as IdCounter from "./IdCounter.ts"
import { HostMetrics, metricsByEvent } from "./HostMetrics.ts"
import type {
  CompactOutcome,
  ContextOutcome,
  InvokeToolInput,
  InvokeToolOutcome,
  SystemOutcome,
  ToolCallInput,
  ToolCallOutcome,
  ToolResultInput,
  ToolResultOutcome,
  ToolsOutcome
} from "./Outcome.ts"

/** What the agent calls: one method per event (docs/design.md#wire-protocol). */
export interface ExtensionHostShape {
  readonly toolCall: (call: ToolCallInput) => Effect.Effect<ToolCallOutcome>
  readonly toolResult: (result: ToolResultInput) => Effect.Effect<ToolResultOutcome>
  readonly context: (messages: ReadonlyArray<unknown>) => Effect.Effect<ContextOutcome>
  readonly beforeAgentStart: (system: string) => Effect.Effect<SystemOutcome>
  readonly beforeCompact: (messages: ReadonlyArray<unknown>) => Effect.Effect<CompactOutcome>
  /** Asks the subscribers again (the startup answer is in `tools`). */
  readonly listTools: Effect.Effect<ToolsOutcome>
  /** The tools accepted at startup, after collisions. */
  readonly tools: Effect.Effect<ReadonlyArray<AcceptedTool>>
  readonly invokeTool: (call: InvokeToolInput) => Effect.Effect<InvokeToolOutcome, UnknownTool | ToolOwnerUnavailable>
  readonly status: Effect.Effect<ReadonlyArray<ExtensionStatus>>
}

export interface HostOptions {
  readonly sessionId: string
  readonly policy?: PolicyConfig | undefined
  /** One policy per config layer, each evaluated and the decisions joined (stricter wins); replaces `policy`. */
  readonly policies?: ReadonlyArray<LayerPolicy> | undefined
  readonly policyHooks?: ReadonlyArray<PolicyHook> | undefined
  readonly maxRewriteRounds?: number | undefined
  readonly builtinTools?: ReadonlyArray<string> | undefined
}

/** HostOptions from a decoded config file, for the layers that take one. */
export const optionsFromConfig = (
  config: Config,
  options: {
    readonly sessionId: string
    readonly policies?: ReadonlyArray<LayerPolicy> | undefined
    readonly policyHooks?: ReadonlyArray<PolicyHook> | undefined
    readonly builtinTools?: ReadonlyArray<string> | undefined
  }
): HostOptions => ({
  sessionId: options.sessionId,
  policy: config.policy,
  policies: options.policies,
  policyHooks: options.policyHooks,
  maxRewriteRounds: config.max_rewrite_rounds,
  // The agent knows its own tools; the config may name more. An extension may shadow none of them.
  builtinTools: [...new Set([...config.builtin_tools, ...(options.builtinTools ?? [])])].sort()
})

// ---------------------------------------------------------------------------------------------------------------
// Exchanges: one extension's part of one round

interface Exchange<E extends EventName> {
  readonly extension: Extension
  readonly status: ExchangeStatus
  readonly reply: ReplyOf<E> | undefined
  /** Known reply fields that belong to other events (ignored). */
  readonly ignored: ReadonlyArray<string>
  readonly latency_ms: number
  /** Why it failed (the audit's `error`), when it did. */
  readonly error: string | undefined
  /** "extension X unavailable: cause", for on_failure. */
  readonly failure: string | undefined
  /** The line of a dead extension's stderr that says why (the audit's `stderr`), for its operator only. */
  readonly stderr?: string | undefined
}

/** The exchange's audit entry: built only when the audit sink records (`AuditLog.enabled`). */
const auditOf = (x: Exchange<EventName>): AuditExchange =>
  x.error !== undefined
    ? x.stderr !== undefined
      ? { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, error: x.error, stderr: x.stderr }
      : { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, error: x.error }
    : x.ignored.length > 0
    ? { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, reply: x.reply, ignored: x.ignored }
    : { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, reply: x.reply }

const statusOf = (error: ExtensionError): ExchangeStatus => {
  switch (error._tag) {
    case "ExtensionTimeout":
      return "timed_out"
    case "ExtensionExited":
      return "exited"
    case "MalformedReply":
      return "malformed"
    case "UnsolicitedOutput":
      return "unsolicited"
    case "ReplyTooLong":
      return "too_long"
    case "SpawnFailed":
    case "ExtensionDead":
      return "dead"
  }
}

const causeText = (error: ExtensionError): string =>
  error._tag === "ExtensionDead" ? error.cause : describeDeathCause(deathCauseOf(error))

/** Requests of settling rounds after the first carry `round` (docs/design.md#combination); the first has none. */
const roundField = (round: number): { readonly round?: number } => (round > 1 ? { round } : {})

/** A keep element for a note: a number as it is, anything else by its shape (strings by their length: `shapeJson`). */
const showIndex = (i: unknown): string => (typeof i === "number" ? String(i) : shapeJson(i, 40))

const rejection: { readonly [R in RejectionReason]: string } = {
  invalid_name: `not a valid tool name (${ToolNameRule}; not __proto__)`,
  builtin: "collides with a built-in tool (names compare ignoring case)",
  duplicate: "declared more than once (names compare ignoring case)",
  input_schema: "invalid input_schema"
}

/** A tool name for a note, with every character outside printable ASCII escaped: a look-alike must show. */
const quoteToolName = (name: string): string =>
  `"${name.replace(/[^\x20-\x7e]|["\\]/g, (c) => c === "\"" || c === "\\" ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}"`

/**
 * Counts a death once per extension, whoever sees it first: the request it failed on, or a later request that
 * found it dead (a spawn failure, or an exit or stray output between requests, is seen by no request).
 */
const reportDeath = (reported: Set<string>, extension: Extension, error: ExtensionError) =>
  Effect.suspend(() => {
    if (reported.has(extension.name)) return Effect.void
    reported.add(extension.name)
    return Effect.gen(function*() {
      const status = yield* extension.status
      const cause = status.state._tag === "dead"
        ? status.state.cause._tag
        : error._tag === "ExtensionDead" ? "unknown" : deathCauseOf(error)._tag
      yield* Metric.update(Metric.withAttributes(HostMetrics.deaths, { cause }), 1)
      // With the line of its stderr that says why: the operator's to read (never the model's).
      const text = status.state._tag === "dead" ? describeDeathCauseWithStderr(status.state.cause) : causeText(error)
      yield* Effect.logWarning(`extension ${extension.name} is dead: ${text}`)
    })
  })

const replied = <E extends EventName>(
  extension: Extension,
  { ignored, reply }: DecodedReply<E>,
  latency_ms: number
): Exchange<E> => ({ extension, status: "replied", reply, ignored, latency_ms, error: undefined, failure: undefined })

const failed = <E extends EventName>(
  extension: Extension,
  error: ExtensionError,
  latency_ms: number,
  reported: Set<string>
): Effect.Effect<Exchange<E>> => {
  const cause = causeText(error)
  return Effect.as(reportDeath(reported, extension, error), {
    extension,
    status: statusOf(error),
    reply: undefined,
    ignored: [],
    latency_ms,
    error: cause,
    failure: `extension ${extension.name} unavailable: ${cause}`,
    stderr: error._tag === "ExtensionExited" || error._tag === "ExtensionDead" ? error.stderr : undefined
  })
}

// On the hot path (once per extension per round): no generator, one clock for both readings.
const exchange = <E extends EventName>(extension: Extension, request: EncodedRequest<E>, reported: Set<string>) =>
  Clock.clockWith((clock) => {
    const start = clock.currentTimeMillisUnsafe()
    return Effect.matchEffect(extension.send(request), {
      onSuccess: (decoded): Effect.Effect<Exchange<E>> =>
        Effect.succeed(replied(extension, decoded, clock.currentTimeMillisUnsafe() - start)),
      onFailure: (error): Effect.Effect<Exchange<E>> => failed(extension, error, clock.currentTimeMillisUnsafe() - start, reported)
    })
  })

/**
 * A round to several subscribers without a fiber per subscriber: every exchange is begun now, in this synchronous
 * step (`Extension.beginNow`: the write happens where the request becomes the one in flight, as in `send`), and
 * one callback waits for all of them. `undefined` (the caller forks one `exchange` per subscriber) when some
 * subscriber cannot begin now: no `beginNow`, or its permit is taken (its requests queue FIFO in `send`); this is
 * checked before anything is begun. An interrupted caller abandons the exchanges, which run on and keep their
 * permits until their replies, as `send`'s hand-off does. Exchanges stay in subscriber (name) order.
 */
const fanOutNow = <E extends EventName>(
  subscribers: ReadonlyArray<Extension>,
  request: EncodedRequest<E>,
  reported: Set<string>
): Effect.Effect<ReadonlyArray<Exchange<E>>> | undefined => {
  for (const x of subscribers) if (x.idle?.() !== true) return undefined
  return Clock.clockWith((clock) => {
    const start = clock.currentTimeMillisUnsafe()
    const started: Array<StartedExchange<E> | undefined> = subscribers.map((x) => x.beginNow?.(request))
    const exits: Array<Exit.Exit<DecodedReply<E>, ExtensionError> | undefined> = started.map(() => undefined)
    const latencies: Array<number> = started.map(() => 0)
    const all = Effect.callback<void>((resume) => {
      let left = started.length
      started.forEach((x, i) => {
        const done = (exit: Exit.Exit<DecodedReply<E>, ExtensionError>) => {
          exits[i] = exit
          latencies[i] = clock.currentTimeMillisUnsafe() - start
          if (--left === 0) resume(Effect.void)
        }
        if (x === undefined) done(Exit.die(new Error(`extension ${subscribers[i]?.name} could not begin an exchange`)))
        else x.onDone(done)
      })
      return Effect.sync(() => started.forEach((x) => x?.abandon()))
    })
    return Effect.flatMap(all, () =>
      Effect.forEach(exits, (exit, i): Effect.Effect<Exchange<E>> => {
        const extension = subscribers[i]
        if (exit === undefined || extension === undefined) return Effect.die(new Error("fan-out: an exchange did not end"))
        if (Exit.isSuccess(exit)) return Effect.succeed(replied(extension, exit.value, latencies[i] ?? 0))
        const error = Cause.findError(exit.cause)
        // A defect is not an extension's failure: it goes on, as from `exchange`.
        return Result.isSuccess(error)
          ? failed(extension, error.success, latencies[i] ?? 0, reported)
          : Effect.failCause(error.failure)
      }))
  })
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * The host over a set of extensions (process-backed or fakes). Runs the startup handshake (session_start, then
 * list_tools) and returns the service. Extensions are owned by the caller's scope.
 */
export const make = (
  extensionsInput: ReadonlyArray<Extension>,
  options: HostOptions
): Effect.Effect<ExtensionHostShape, never, AuditLog | Scope.Scope> => Effect.gen(function*() {
  const audit = yield* AuditLog
  // Canonical order is name order (docs/design.md#combination): config order never reaches any outcome or record.
  const extensions = sortByName(extensionsInput)
  const duplicates = extensions.filter((x, i) => i > 0 && extensions[i - 1]?.name === x.name).map((x) => x.name)
  if (duplicates.length > 0) {
    // Names are the canonical order and the identity in every record: two alike would let load order decide.
    return yield* Effect.die(new DuplicateExtensionNames({ names: [...new Set(duplicates)] }))
  }
  const policy = options.policy ?? Defaults.policy
  const hooks = options.policyHooks ?? []
  const layered = options.policies
  const maxRounds = options.maxRewriteRounds ?? Defaults.max_rewrite_rounds
  const builtin = options.builtinTools ?? Defaults.builtin_tools
  const sessionId = options.sessionId
  const reported = new Set<string>()
  // Plain counters, each changed in one synchronous step (a Ref was two Effect steps per dispatch for nothing).
  let seq = 0
  // Who gets each event, worked out once as far as the payload does not matter (matchers: per round).
  const audience: Record<EventName, RoundAudience> = Object.fromEntries(
    EventNames.map((event): [EventName, RoundAudience] => [event, roundAudience(extensions, event)])
  ) as Record<EventName, RoundAudience> // fromEntries over every EventName: the record is total
  // Round ids (docs/design.md#wire-protocol): one per round of every dispatch, the same for all of the round's subscribers.
  const nextId = IdCounter.make()
  function encodeRound<E extends EventName>(event: E, body: RequestBody<E>): EncodedRequest<E>
  function encodeRound(event: EventName, body: RequestBody<EventName>): EncodedRequest {
    const value: WithId<Request> = { ...body, id: nextId() }
    return { event, value, bytes: Framing.encodeLine(value) }
  }
  const nextCallId = IdCounter.make("c-")
  const callIdOf = (given: string | undefined): string => given ?? nextCallId()
  /**
   * Does the sink keep records? `AuditLog.layerNone` does not: then no audit entry, round or note is built, and
   * `record` is never called (the outcome is all a dispatch makes).
   */
  const recording = audit.enabled !== false

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
  const fanOut = <E extends EventName>(
    event: E,
    body: RequestBody<E>,
    except?: ReadonlySet<string>
  ): Effect.Effect<{ readonly exchanges: ReadonlyArray<Exchange<E>>; readonly skipped: ReadonlyArray<AuditExchange> }> =>
    Effect.suspend(() => {
      const request = encodeRound(event, body)
      const heard = audience[event](request.value)
      const { skipped } = heard
      const subscribers = except === undefined ? heard.subscribers : heard.subscribers.filter((x) => !except.has(x.name))
      // forEach keeps the input order, and subscribers are in name order: so are the exchanges.
      const only = subscribers.length === 1 ? subscribers[0] : undefined
      if (only !== undefined) return Effect.map(exchange(only, request, reported), (x) => ({ exchanges: [x], skipped }))
      const now = subscribers.length > 1 ? fanOutNow(subscribers, request, reported) : undefined
      return Effect.map(
        now ?? Effect.forEach(subscribers, (x) => exchange(x, request, reported), { concurrency: "unbounded" }),
        (exchanges) => ({ exchanges, skipped })
      )
    })

  /** A round's audit entry (only when recording). */
  const auditRound = (
    round: number,
    exchanges: ReadonlyArray<Exchange<EventName>>,
    skipped: ReadonlyArray<AuditExchange>
  ): AuditRound => ({
    round,
    // Both lists are in name order (see Audience): a merge, not a sort, on every round.
    exchanges: mergeByName(exchanges.map(auditOf), skipped)
  })

  /** What a tool event's audit record names: the tool, and the args as the agent passed them. */
  interface AuditSubject {
    readonly tool: string
    readonly args?: JsonObject
  }

  interface Dispatched<A> {
    readonly outcome: A
    /** Empty when not recording. */
    readonly rounds: ReadonlyArray<AuditRound>
    /** Empty when not recording. */
    readonly notes: ReadonlyArray<string>
  }

  /**
   * Runs one dispatch with its span, metrics and audit record. No generator: the sequence number is a plain
   * counter, the clock is read once at each end (monotonic for the latency metric, as `trackDuration` does), the
   * metrics are updated in one synchronous step, and the record is built and written only when the sink keeps it.
   */
  const dispatch = <A>(
    event: EventName,
    callId: string | undefined,
    body: Effect.Effect<Dispatched<A>>,
    subject?: AuditSubject
  ): Effect.Effect<A> => {
    const metrics = metricsByEvent[event]
    const timed = Clock.clockWith((clock) => {
      const n = seq++
      const start = clock.currentTimeMillisUnsafe()
      const startNanos = clock.monotonicTimeNanosUnsafe()
      const done = (outcome: A) =>
        Effect.withFiber((fiber) => {
          metrics.latency.updateUnsafe(Duration.nanos(clock.monotonicTimeNanosUnsafe() - startNanos), fiber.context)
          metrics.count.updateUnsafe(1, fiber.context)
          return Effect.succeed(outcome)
        })
      return Effect.flatMap(body, ({ notes, outcome, rounds }) =>
        recording
          ? Effect.andThen(
            Effect.suspend(() =>
              audit.record({
                seq: n,
                session_id: sessionId,
                time: new Date(start).toISOString(),
                event,
                call_id: callId,
                ...subject,
                rounds,
                outcome,
                notes,
                duration_ms: clock.currentTimeMillisUnsafe() - start
              })
            ),
            done(outcome)
          )
          : done(outcome))
    })
    // The span is the parent of everything the dispatch runs (policy hooks, logs). `useSpan` and the parent span
    // rather than `withSpan`, which also pushes a stack frame per dispatch: measured 2.1 -> 1.2 us per span. No stack
    // trace either (it costs more than the rest of the span); the span name says where it is. With effect's own
    // `nativeTracer` (no tracing backend installed) nothing can ever read the span, so there is none: effect
    // documents that comparison for skipping work only a backend could observe. The span and the two context
    // changes of the parent span were ~2.5 of ~12 us per dispatch over one fake, on the path to the write and back.
    return Effect.withFiber((fiber) =>
      fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer
        ? timed
        : Effect.useSpan(
          metrics.span,
          callId !== undefined ? { attributes: { event, call_id: callId } } : metrics.spanOptions,
          (span) => Effect.provideService(timed, Tracer.ParentSpan, span)
        )
    )
  }

  /**
   * Input the host cannot send (docs/design.md#failures): recorded as a dispatch that reached no extension, with the reason in
   * the notes, and answered with the event's fail-closed outcome. The agent's value goes nowhere, the audit included.
   */
  const refuse = <A>(event: EventName, callId: string | undefined, reason: string, outcome: A, tool?: string): Effect.Effect<A> =>
    dispatch(
      event,
      callId,
      Effect.succeed({ outcome, rounds: [], notes: recording ? [`not sent to any extension: ${reason}`] : [] }),
      tool === undefined ? undefined : { tool }
    )
  const hostReason = (reason: string): ReadonlyArray<Reason> => [{ extension: HostReasonName, reason }]

  const onFailure = (x: Exchange<EventName>) => (x.failure !== undefined ? x.extension.config.on_failure : "ignore")

  /** One extension's verdict in a tool_call round: its reply's, or its on_failure's when it failed. */
  const verdictOf = (x: Exchange<"tool_call">): RoundReply<JsonObject, Verdict> => {
    const name = x.extension.name
    if (x.reply !== undefined) return { name, proposal: x.reply.args, value: fromToolCallReply(name, x.reply) }
    const mode = onFailure(x)
    const failure = x.failure ?? ""
    const verdict = mode === "deny" ? denyVerdict(name, failure) : mode === "ask" ? askVerdict(name, failure) : none
    return { name, proposal: undefined, value: verdict }
  }

  // ---- tool_call: settle the args, join the verdicts over all rounds, then the policy on the settled args.
  // The common case (one round, nobody rewrites, no policy hook) is: the fan-out, then synchronous steps.
  const toolCall = (call: ToolCallInput): Effect.Effect<ToolCallOutcome> =>
    Effect.suspend(() => {
      const call_id = callIdOf(call.call_id)
      const unsendable = unsendableField("args", call.args)
      if (unsendable !== undefined) {
        // Denied, and nothing of the args is kept: the call must not run, and they cannot be encoded safely.
        const outcome: ToolCallOutcome = { decision: "deny", reasons: hostReason(unsendable), args: {}, rounds: 0 }
        return refuse("tool_call", call_id, unsendable, outcome, call.tool)
      }
      if (call.refused !== undefined) {
        // Refused by the agent before any extension could judge it: audited with its args, sent to nobody.
        const outcome: ToolCallOutcome = { decision: "deny", reasons: hostReason(call.refused), args: {}, rounds: 0 }
        const notes = recording ? [`not sent to any extension: ${call.refused}`] : []
        return dispatch("tool_call", call_id, Effect.succeed({ outcome, rounds: [], notes }), { tool: call.tool, args: call.args })
      }
      const auditRounds: Array<AuditRound> = []
      const settled = settleEffect<JsonObject, Verdict, never, never>({
        initial: call.args,
        reducer: VerdictReducer,
        stop: (v) => v.level === "deny",
        maxRounds,
        round: (args, round) =>
          Effect.map(
            fanOut("tool_call", { event: "tool_call", session_id: sessionId, call_id, tool: call.tool, args, ...roundField(round) }),
            ({ exchanges, skipped }) => {
              if (recording) auditRounds.push(auditRound(round, exchanges, skipped))
              return exchanges.map(verdictOf)
            }
          )
      })
      const finish = (outcome: SettleOutcome<JsonObject, Verdict>, policyDecision: PolicyDecision): Dispatched<ToolCallOutcome> => {
        const verdict = outcome._tag === "Unsettled"
          ? join(outcome.value, {
            level: "deny",
            // Everyone who proposed in any round: with two fighters, the last round names only one of them.
            reasons: outcome.fighters.map((name) => ({ extension: name, reason: unsettledReason(outcome.fighters) }))
          })
          : outcome.value
        const decision = decide(policyDecision, verdict)
        return {
          outcome: {
            decision: decision.decision,
            reasons: decision.reasons,
            args: outcome.payload,
            rounds: outcome.rounds,
            rewrittenBy: outcome.adopted
          },
          rounds: auditRounds,
          notes: recording ? [`policy: ${policyDecision.level} (${policyDecision.source})`, `settling: ${outcome._tag}`] : []
        }
      }
      return dispatch(
        "tool_call",
        call_id,
        Effect.flatMap(settled, (outcome) =>
          // No hooks (the common case): the rules are plain synchronous code.
          layered !== undefined
            ? Effect.map(evaluateLayerPolicies(layered, hooks, { tool: call.tool, args: outcome.payload }), (d) => finish(outcome, d))
            : hooks.length === 0
            ? Effect.succeed(finish(outcome, evaluateRules(policy, { tool: call.tool, args: outcome.payload })))
            : Effect.map(evaluatePolicy(policy, hooks, { tool: call.tool, args: outcome.payload }), (d) => finish(outcome, d))),
        { tool: call.tool, args: call.args }
      )
    })

  // ---- tool_result: settle the content; is_error only ever raised; any failing on_failure≠ignore withholds
  const toolResult = (input: ToolResultInput): Effect.Effect<ToolResultOutcome> =>
    Effect.suspend(() => {
      const call_id = callIdOf(input.call_id)
      const unsendable = unsendableField("args", input.args)
      if (unsendable !== undefined) {
        const outcome: ToolResultOutcome = { content: `[withheld: ${unsendable}]`, is_error: true, rounds: 0 }
        return refuse("tool_result", call_id, unsendable, outcome, input.tool)
      }
      const auditRounds: Array<AuditRound> = []
      const withheldBy: Array<string> = []
      const settled = settleEffect<string, boolean, never, never>({
        initial: input.content,
        reducer: IsErrorReducer,
        stop: () => false,
        maxRounds,
        round: (content, round) =>
          Effect.map(
            fanOut("tool_result", {
              event: "tool_result",
              session_id: sessionId,
              call_id,
              tool: input.tool,
              args: input.args,
              content,
              is_error: input.is_error,
              ...roundField(round)
            }),
            ({ exchanges, skipped }) => {
              if (recording) auditRounds.push(auditRound(round, exchanges, skipped))
              for (const x of exchanges) if (onFailure(x) !== "ignore" && x.failure !== undefined) withheldBy.push(x.failure)
              return exchanges.map((x): RoundReply<string, boolean> => ({
                name: x.extension.name,
                proposal: x.reply?.content,
                value: x.reply?.is_error === true
              }))
            }
          )
      })
      return dispatch(
        "tool_result",
        call_id,
        Effect.map(settled, (outcome): Dispatched<ToolResultOutcome> => {
          const isError = input.is_error || outcome.value
          const result: ToolResultOutcome = withheldBy.length > 0
            ? { content: `[withheld: ${[...new Set(withheldBy)].sort().join("; ")}]`, is_error: true, rounds: outcome.rounds }
            : outcome._tag === "Unsettled"
            ? {
              content: `[withheld: ${unsettledReason(outcome.fighters)}]`,
              is_error: true,
              rounds: outcome.rounds
            }
            : { content: outcome.payload, is_error: isError, rounds: outcome.rounds }
          return { outcome: result, rounds: auditRounds, notes: recording ? [`settling: ${outcome._tag}`] : [] }
        }),
        { tool: input.tool, args: input.args }
      )
    })

  /** A single-round event: fan out once, combine the replies in name order (the failed exchanges too, if wanted). */
  const single = <E extends EventName, A>(
    event: E,
    value: RequestBody<E>,
    combine: (
      replies: ReadonlyArray<Named<ReplyOf<E>>>,
      exchanges: ReadonlyArray<Exchange<E>>
    ) => { readonly outcome: A; readonly notes: ReadonlyArray<string> },
    except?: ReadonlySet<string>
  ) =>
    dispatch(
      event,
      undefined,
      Effect.map(fanOut(event, value, except), ({ exchanges, skipped }): Dispatched<A> => {
        const replies: Array<Named<ReplyOf<E>>> = []
        for (const x of exchanges) if (x.reply !== undefined) replies.push({ name: x.extension.name, value: x.reply })
        const { notes, outcome } = combine(replies, exchanges)
        return recording ? { outcome, rounds: [auditRound(1, exchanges, skipped)], notes } : { outcome, rounds: [], notes: [] }
      })
    )

  // ---- context: the intersection of the kept sets; a failing filter whose on_failure is not ignore keeps nothing
  const context = (messages: ReadonlyArray<unknown>) => {
    const unsendable = unsendableField("messages", messages)
    if (unsendable !== undefined) {
      const outcome: ContextOutcome = { keep: [], messages: [], withheld: hostReason(unsendable) }
      return refuse("context", undefined, unsendable, outcome)
    }
    return single("context", { event: "context", session_id: sessionId, messages }, (replies, exchanges) => {
      // "ask" acts as "deny": nobody can be asked mid-turn (docs/design.md#failures). Exchanges are in name order.
      const withheld: Array<Reason> = []
      for (const x of exchanges) {
        if (x.reply === undefined && x.failure !== undefined && onFailure(x) !== "ignore") {
          withheld.push({ extension: x.extension.name, reason: x.failure })
        }
      }
      const { keep, outOfRange } = combineKeep(messages.length, replies)
      const notes = recording
        ? outOfRange.map((o) => `${o.extension}: keep indices that name no message ignored: ${o.indices.map(showIndex).join(", ")}`)
        : []
      if (withheld.length > 0) {
        const outcome: ContextOutcome = { keep: [], messages: [], withheld }
        return { outcome, notes: recording ? [...notes, ...withheld.map((w) => `context withheld: ${w.reason}`)] : [] }
      }
      const kept: Array<unknown> = []
      for (const i of keep) kept.push(messages[i])
      return { outcome: { keep, messages: kept, withheld }, notes }
    })
  }

  const beforeAgentStart = (system: string) =>
    single("before_agent_start", { event: "before_agent_start", session_id: sessionId, system }, (replies) => ({
      outcome: { system: combineSystem(system, replies) } satisfies SystemOutcome,
      notes: []
    }))

  const beforeCompact = (messages: ReadonlyArray<unknown>) => {
    const unsendable = unsendableField("messages", messages)
    // Cancelled: the restrictive answer (nothing is compacted that no extension could see).
    if (unsendable !== undefined) return refuse("before_compact", undefined, unsendable, { cancel: true, summary: null } satisfies CompactOutcome)
    return single("before_compact", { event: "before_compact", session_id: sessionId, messages }, (replies) => {
      const { cancel, cancelledBy, summary } = combineCompact(replies)
      return {
        outcome: { cancel, summary: cancel ? null : summary } satisfies CompactOutcome,
        notes: cancel ? [`cancelled by ${cancelledBy.join(", ")}`] : []
      }
    })
  }

  const rejectedNote = (r: ToolsOutcome["rejected"][number]) =>
    `tool ${quoteToolName(r.name)} rejected for ${r.extensions.join(", ")}: ${rejection[r.reason]}${r.detail !== undefined ? `: ${r.detail}` : ""}`
  const listTools = single("list_tools", { event: "list_tools", session_id: sessionId }, (replies) => {
    const outcome = combineTools(builtin, replies)
    return { outcome: outcome satisfies ToolsOutcome, notes: outcome.rejected.map(rejectedNote) }
  })

  // ---- startup: session_start, then list_tools (docs/design.md#lifecycle)
  yield* single("session_start", { event: "session_start", session_id: sessionId }, () => ({ outcome: {}, notes: [] }))
  const startupTools = yield* listTools
  // Said where the operator looks, not only in the audit: a rejected tool is one the model will never see.
  yield* Effect.forEach(startupTools.rejected, (r) => Effect.logWarning(rejectedNote(r)), { discard: true })
  // At close, session_end is one more dispatch: in parallel, bounded by each timeout, and in the audit log.
  // It runs before the extensions' own close sequences (finalizers run in reverse), which then skip it. Not to an
  // extension still busy at close: nothing else runs then, so its request is one whose caller went away (an
  // interrupted agent, Ctrl-C), and session_end would wait for that reply, then for its own (a timeout each).
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      const busy = extensions.filter((x) => x.idle?.() === false).map((x) => x.name)
      const note = busy.length === 0 ? [] : [`session_end not sent to ${busy.join(", ")}: still busy with a request whose caller went away`]
      return Effect.asVoid(
        single("session_end", { event: "session_end", session_id: sessionId }, () => ({ outcome: {}, notes: note }), new Set(busy))
      )
    })
  )
  // Fixed at startup: `listTools` asks again and reports, but what the agent may invoke stays what was accepted here.
  const tools: ReadonlyArray<AcceptedTool> = startupTools.accepted

  const invokeTool = (call: InvokeToolInput) =>
    Effect.gen(function*() {
      const entry = tools.find((t) => t.tool.name === call.tool)
      if (entry === undefined) return yield* new UnknownTool({ tool: call.tool })
      const owner = extensions.find((x) => x.name === entry.extension)
      if (owner === undefined) return yield* new UnknownTool({ tool: call.tool })
      const call_id = callIdOf(call.call_id)
      const unsendable = unsendableField("args", call.args)
      if (unsendable !== undefined) {
        // Not sent to the owner: an error result the model can read, like any failed tool.
        return yield* refuse("invoke_tool", call_id, unsendable, { result: `[withheld: ${unsendable}]`, is_error: true } satisfies InvokeToolOutcome, call.tool)
      }
      const value: RequestBody<"invoke_tool"> = {
        event: "invoke_tool",
        session_id: sessionId,
        call_id,
        tool: call.tool,
        args: call.args
      }
      // Routed to the one owner only, whatever its `events` say: it declared the tool.
      const result = yield* dispatch(
        "invoke_tool",
        call_id,
        Effect.map(exchange(owner, encodeRound("invoke_tool", value), reported), (x) => {
          const outcome = x.reply !== undefined
            ? { _tag: "ok" as const, result: x.reply.result ?? null, is_error: x.reply.is_error === true }
            : { _tag: "failed" as const, cause: x.error ?? x.status }
          return { outcome, rounds: recording ? [auditRound(1, [x], [])] : [], notes: [] }
        }),
        { tool: call.tool, args: call.args }
      )
      if (result._tag === "failed") {
        return yield* new ToolOwnerUnavailable({ tool: call.tool, extension: owner.name, cause: result.cause })
      }
      return { result: result.result, is_error: result.is_error } satisfies InvokeToolOutcome
    })

  return {
    toolCall,
    toolResult,
    context,
    beforeAgentStart,
    beforeCompact,
    listTools,
    tools: Effect.succeed(tools),
    invokeTool,
    status: Effect.forEach(extensions, (x) => x.status)
  } satisfies ExtensionHostShape
})

/** Build the service from already-acquired extensions (fakes, or your own). */
const layerFromExtensions = <R>(
  extensions: Effect.Effect<ReadonlyArray<Extension>, never, R>,
  options: HostOptions
): Layer.Layer<ExtensionHost, never, AuditLog | Exclude<R, Scope.Scope>> =>
  Layer.effect(ExtensionHost, Effect.flatMap(extensions, (xs) => make(xs, options)))

export interface ProcessHostOptions {
  readonly sessionId: string
  /** The config file's folder: relative `cwd`s resolve against it. */
  readonly baseDir: string
  /** Compiled-in policy hooks, evaluated before the config's rules (docs/design.md#combination). */
  readonly policyHooks?: ReadonlyArray<PolicyHook> | undefined
  /** One policy per config layer (`loadLayers`), used instead of the config's one `policy`. */
  readonly policies?: ReadonlyArray<LayerPolicy> | undefined
  /** The agent's own tools, added to the config's `builtin_tools`: no extension may declare one of these. */
  readonly builtinTools?: ReadonlyArray<string> | undefined
  /** Longest reply line in bytes (default 16 MiB). */
  readonly maxLineBytes?: number | undefined
}

/**
 * The host over real processes, one per configured extension, spawned concurrently. Each is a scoped resource:
 * when the layer's scope closes, each gets `session_end`, then stdin closed, a grace, SIGTERM, SIGKILL.
 */
const layer = (
  config: Config,
  options: ProcessHostOptions
): Layer.Layer<ExtensionHost, never, AuditLog> =>
  layerFromExtensions(
    Effect.gen(function*() {
      // Each extension in a scope of its own, under one that closes them all at once: every close may wait
      // session_end's timeout and two graces, and eight hung extensions closed one after another would take
      // eight times as long. Within one extension the close sequence keeps its order.
      const all = yield* Scope.fork(yield* Effect.scope, "parallel")
      return yield* Effect.forEach(
        config.extensions,
        (x) =>
          Effect.flatMap(Scope.fork(all, "sequential"), (own) =>
            ProcessExtension.make(x, {
              sessionId: options.sessionId,
              baseDir: options.baseDir,
              ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {})
            }).pipe(Scope.provide(own))),
        { concurrency: "unbounded" }
      )
    }),
    optionsFromConfig(config, options)
  )

/**
 * The host over real processes from a config file: reads and decodes `file` (relative to the current directory),
 * then `layer(config, { ...options, baseDir: the file's folder })`. Fails with `ConfigUnreadable` or
 * `ConfigInvalid` (every problem, with its path) before any extension starts.
 */
const layerFromFile = (
  file: string,
  options: Omit<ProcessHostOptions, "baseDir">
): Layer.Layer<
  ExtensionHost,
  ConfigUnreadable | ConfigInvalid,
  AuditLog | FileSystem.FileSystem | Path.Path
> => Layer.unwrap(Effect.map(loadConfig(file), (loaded) => layer(loaded.config, { ...options, baseDir: loaded.baseDir })))

/**
 * The extension host service. Layers:
 * - `ExtensionHost.layerFromFile(path, { sessionId })`: over real processes, from an `abhed.json` (needs the
 *   platform's `FileSystem` and `Path`, e.g. `NodeServices.layer`, and an `AuditLog`);
 * - `ExtensionHost.layer(config, { sessionId, baseDir })`: the same from a decoded config;
 * - `ExtensionHost.layerFromExtensions(acquire, options)`: over extensions you acquire (fakes, or your own);
 * - `ExtensionHost.layerFake(fakes, options)`: over in-process fakes;
 * - `ExtensionHost.layerMock(partial)`: a plain mock for agent tests (a missing member is a defect when called).
 */
export class ExtensionHost extends Context.Service<ExtensionHost, ExtensionHostShape>()("@abhed/host/ExtensionHost") {
  static readonly make = make
  static readonly layer = layer
  static readonly layerFromFile = layerFromFile
  static readonly layerFromExtensions = layerFromExtensions
  /** Over in-process fakes (`FakeExtension.make` / `fromReplies`): every host rule, no processes. */
  static readonly layerFake = (
    fakes: ReadonlyArray<Effect.Effect<Extension, never, Scope.Scope>>,
    options: HostOptions
  ): Layer.Layer<ExtensionHost, never, AuditLog> => layerFromExtensions(Effect.all(fakes), options)
  static readonly layerMock = (service: Partial<ExtensionHostShape>): Layer.Layer<ExtensionHost> =>
    Layer.mock(ExtensionHost, service)
}
