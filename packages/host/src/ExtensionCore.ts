import {
  decodeReply,
  type DecodedReply,
  type EventName,
  type ExtensionConfig,
  Framing,
  MaxJsonDepth,
  nestedDeeperThan,
  type SessionEndRequest
} from "@abhed/protocol"
import { Clock, Deferred, Duration, Effect, Ref, Result, Scope, Semaphore } from "effect"
import { type EncodedRequest, type Extension, type ExtensionState, subscribes } from "./Extension.ts"
import {
  deathCauseOf,
  describeDeathCause,
  ExtensionDead,
  type ExtensionError,
  ExtensionTimeout,
  type SpawnFailed,
  UnsolicitedOutput
} from "./ExtensionError.ts"

/**
 * The behaviour every extension shares, whatever carries its bytes (DESIGN §4): one request in flight (FIFO),
 * the startup timeout on the first exchange and `timeout_ms` after it, reply matching, decoding, death for good
 * on any failure, and the close sequence. A `Transport` (a process's pipes, or a fake's handler) only moves
 * requests out and lines back, so process-backed and fake extensions behave alike by construction.
 */

/** Every failure that kills an extension (`ExtensionDead` is what later requests get). */
export type DeathError = Exclude<ExtensionError, ExtensionDead>

export interface Transport {
  /** Hand one request to the extension. Never fails: a broken pipe shows up as an exit or a timeout. */
  readonly write: <E extends EventName>(request: EncodedRequest<E>) => Effect.Effect<void>
  /** After a death: stop the extension now (a process: SIGTERM its group, SIGKILL after the grace). */
  readonly terminate: Effect.Effect<void>
  /** At scope close while alive: stop it gracefully (close stdin, wait a grace, then terminate). */
  readonly close: Effect.Effect<void>
  readonly pid: number | undefined
  readonly stderrTail: Effect.Effect<string>
}

/** What a transport reports to the core. */
export interface TransportEvents {
  /** One JSON value the extension wrote (one line). */
  readonly line: (json: unknown) => Effect.Effect<void>
  /** A failure found by the transport (exit, bad framing, …): the extension dies. */
  readonly fail: (error: DeathError) => Effect.Effect<void>
  /** The event of the request in flight, if any (to name it in errors). */
  readonly inFlight: Effect.Effect<EventName | undefined>
}

/** A transport with nothing behind it: what an extension that never started has. */
export const deadTransport: Transport = {
  write: () => Effect.void,
  terminate: Effect.void,
  close: Effect.void,
  pid: undefined,
  stderrTail: Effect.succeed("")
}

interface InFlight {
  readonly event: EventName
  readonly reply: Deferred.Deferred<unknown, DeathError>
  readonly timeoutMs: number
  /** When the reply is due, on the Clock: set once the request is written (the timeout counts from the write). */
  deadline: number
}

interface State {
  readonly phase: ExtensionState
  readonly inFlight: InFlight | undefined
  /** Exchanges begun (the first gets `startup_timeout_ms`). */
  readonly exchanges: number
  readonly served: number
  /** The scope is closing: exits are expected now, and the close sequence does the killing. */
  readonly closing: boolean
  /** An exchange was interrupted after its write: a reply may still come, so the stream is out of step. */
  readonly abandoned: boolean
  /** session_end was sent already (by the host, which audits it): the close sequence does not send it again. */
  readonly sessionEnded: boolean
}

const preview = (json: unknown): string => {
  // Any line the extension wrote, unchecked: JSON.stringify would overflow the stack on deep nesting.
  if (nestedDeeperThan(json, MaxJsonDepth)) return `(JSON nested more than ${MaxJsonDepth} levels deep)`
  const text = JSON.stringify(json) ?? String(json)
  return text.length > 200 ? `${text.slice(0, 197)}...` : text
}

export interface CoreOptions<R> {
  readonly config: ExtensionConfig
  readonly sessionId: string
  readonly connect: (events: TransportEvents) => Effect.Effect<Transport, SpawnFailed, R | Scope.Scope>
}

export const make = Effect.fnUntraced(function*<R>(options: CoreOptions<R>) {
  const { config } = options
  const name = config.name
  const scope = yield* Effect.scope
  // Exchange fibers live in a child scope made now, so it closes after every finalizer added later: the host's
  // session_end dispatch (and this extension's own close sequence) can still run exchanges while closing.
  const exchanges = yield* Scope.fork(scope, "sequential")
  const permit = yield* Semaphore.make(1) // waiters are served in arrival order: FIFO
  const state = yield* Ref.make<State>({
    phase: { _tag: "starting" },
    inFlight: undefined,
    exchanges: 0,
    served: 0,
    closing: false,
    abandoned: false,
    sessionEnded: false
  })
  const transportReady = yield* Deferred.make<Transport>()
  const transport = Deferred.await(transportReady)

  /*
   * The timeout: one watchdog fiber per extension, not `Effect.timeout` per exchange. Measured, the per-exchange
   * race (two fibers, a timer set and cleared) was ~10 µs of a ~100 µs dispatch (docs/benchmarks.md). The watchdog
   * sleeps until the deadline of the request in flight and fails its reply if it is still due; under steady traffic
   * it wakes about once per `timeout_ms`, not once per request. It sleeps on the Clock, so TestClock drives it.
   */
  let watchdogTarget = Number.POSITIVE_INFINITY // when the watchdog will next look
  let poke = Deferred.makeUnsafe<void>() // wakes it early: a request due before `watchdogTarget`
  // Each look is one synchronous step (state, time, next target and poke together), so an exchange armed while
  // the watchdog runs is either seen by this look or pokes the next wait: it can never be missed.
  const look = Clock.clockWith((clock) =>
    Effect.suspend(() => {
      const now = clock.currentTimeMillisUnsafe()
      const due = Ref.getUnsafe(state).inFlight
      const late = due !== undefined && due.deadline <= now ? due : undefined
      const wait = due !== undefined && due.deadline > now ? due.deadline - now : undefined
      poke = Deferred.makeUnsafe<void>()
      watchdogTarget = wait === undefined ? Number.POSITIVE_INFINITY : now + wait
      const sleep = wait === undefined
        ? Deferred.await(poke)
        : Effect.raceFirst(Effect.sleep(Duration.millis(wait)), Deferred.await(poke))
      return late === undefined
        ? sleep
        : Effect.andThen(Deferred.fail(late.reply, new ExtensionTimeout({ extension: name, timeout_ms: late.timeoutMs })), sleep)
    }))
  const watchdog = Effect.forever(look, { disableYield: true })
  yield* Effect.forkIn(watchdog, scope)
  /** After the write: the reply is due in `timeoutMs`; wake the watchdog if it would look too late. */
  const arm = (inFlight: InFlight) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.suspend(() => {
        inFlight.deadline = now + inFlight.timeoutMs
        return inFlight.deadline < watchdogTarget ? Effect.asVoid(Deferred.succeed(poke, undefined)) : Effect.void
      }))

  // Termination runs once; whoever comes later (the scope's release) waits for the same run.
  const terminateStarted = yield* Ref.make(false)
  const terminated = yield* Deferred.make<void>()
  const terminateOnce = Effect.uninterruptible(
    Effect.flatMap(Ref.getAndSet(terminateStarted, true), (started) =>
      started
        ? Deferred.await(terminated)
        : transport.pipe(
          Effect.flatMap((t) => t.terminate),
          Effect.ensuring(Deferred.succeed(terminated, undefined))
        ))
  )

  const die = (error: DeathError): Effect.Effect<void> =>
    Effect.flatMap(
      Ref.modify(state, (s): [{ inFlight: InFlight | undefined; kill: boolean } | undefined, State] => {
        if (s.phase._tag === "dead") return [undefined, s]
        const next: State = s.closing
          ? { ...s, inFlight: undefined }
          : { ...s, inFlight: undefined, phase: { _tag: "dead", cause: deathCauseOf(error) } }
        return [{ inFlight: s.inFlight, kill: !s.closing }, next]
      }),
      (found) =>
        found === undefined ? Effect.void : Effect.gen(function*() {
          if (found.inFlight !== undefined) yield* Deferred.fail(found.inFlight.reply, error)
          // In the background, so the failing request returns now; the scope's release joins it.
          if (found.kill) yield* Effect.forkDetach(terminateOnce)
        })
    )

  const events: TransportEvents = {
    line: (json) =>
      Effect.flatMap(
        Ref.modify(state, (s): ["drop" | "unsolicited" | InFlight, State] => {
          if (s.phase._tag === "dead") return ["drop", s]
          if (s.inFlight === undefined) return ["unsolicited", s]
          return [s.inFlight, { ...s, inFlight: undefined }]
        }),
        (to) =>
          to === "drop"
            ? Effect.void
            : to === "unsolicited"
            ? die(new UnsolicitedOutput({ extension: name, line: preview(json) }))
            : Effect.asVoid(Deferred.succeed(to.reply, json))
      ),
    fail: die,
    inFlight: Effect.map(Ref.get(state), (s) => s.inFlight?.event)
  }

  /*
   * One request and its reply, under the permit, in steps: register (one synchronous step: checking for death and
   * registering is atomic, or a death in between would leave the request waiting for a reply that cannot come),
   * write and arm the watchdog (the timeout counts from the write), await the reply, decode it. Any failure but
   * `ExtensionDead` kills the extension. On the hot path, so written without generators.
   */
  const register = <E extends EventName>(
    request: EncodedRequest<E>,
    timeoutOverride: number | undefined
  ): Effect.Effect<InFlight, ExtensionDead> =>
    Effect.flatMap(
      Ref.modify(state, (s): [InFlight | string, State] => {
        if (s.phase._tag === "dead") return [describeDeathCause(s.phase.cause), s]
        const timeoutMs = timeoutOverride ?? (s.exchanges === 0 ? config.startup_timeout_ms : config.timeout_ms)
        const reply = Deferred.makeUnsafe<unknown, DeathError>()
        const inFlight: InFlight = { event: request.event, reply, timeoutMs, deadline: Number.POSITIVE_INFINITY }
        return [inFlight, {
          ...s,
          inFlight,
          exchanges: s.exchanges + 1,
          sessionEnded: s.sessionEnded || request.event === "session_end"
        }]
      }),
      (inFlight) => typeof inFlight === "string" ? Effect.fail(new ExtensionDead({ extension: name, cause: inFlight })) : Effect.succeed(inFlight)
    )

  const write = <E extends EventName>(inFlight: InFlight, request: EncodedRequest<E>) =>
    transport.pipe(Effect.flatMap((t) => t.write(request)), Effect.andThen(arm(inFlight)))

  const finish = <E extends EventName>(request: EncodedRequest<E>, json: unknown) => {
    const decoded = decodeReply(request.event, json)
    if (Result.isFailure(decoded)) return Effect.fail(decoded.failure)
    return Effect.as(
      Ref.update(state, (now): State => ({
        ...now,
        served: now.served + 1,
        phase: now.phase._tag === "starting" ? { _tag: "live" } : now.phase
      })),
      decoded.success
    )
  }

  const dieUnlessDead = (error: ExtensionError) => (error._tag === "ExtensionDead" ? Effect.void : die(error))

  /**
   * After the write, the reply belongs to this request whatever the caller does: a caller interrupted while it
   * waits hands the rest of the exchange to a fiber in the extension's scope, which keeps the permit until the
   * reply (or the timeout, or a death) comes, so the next request can never read this one's reply. The common
   * case forks nothing.
   */
  const handOff = <E extends EventName>(inFlight: InFlight, request: EncodedRequest<E>) =>
    Deferred.await(inFlight.reply).pipe(
      Effect.flatMap((json) => finish(request, json)),
      Effect.tapError(dieUnlessDead),
      Effect.onInterrupt(() => Ref.update(state, (s) => ({ ...s, abandoned: true }))),
      Effect.ignore,
      Effect.ensuring(permit.release(1)),
      Effect.forkIn(exchanges, { startImmediately: true }),
      Effect.asVoid
    )

  const send = <E extends EventName>(
    request: EncodedRequest<E>,
    timeoutOverride?: number
  ): Effect.Effect<DecodedReply<E>, ExtensionError> =>
    Effect.uninterruptibleMask((restore) =>
      // Waiting for the permit may be interrupted (nothing was written yet): requests queue FIFO.
      Effect.flatMap(restore(permit.take(1)), () => {
        let handedOff = false
        return register(request, timeoutOverride).pipe(
          Effect.flatMap((inFlight) =>
            write(inFlight, request).pipe(
              Effect.andThen(
                restore(Deferred.await(inFlight.reply)).pipe(
                  Effect.onInterrupt(() => {
                    handedOff = true
                    return handOff(inFlight, request)
                  })
                )
              ),
              Effect.flatMap((json) => finish(request, json))
            )
          ),
          Effect.tapError(dieUnlessDead),
          Effect.ensuring(Effect.suspend(() => (handedOff ? Effect.void : permit.release(1))))
        )
      })
    )

  const connected = yield* options.connect(events).pipe(
    Effect.catch((error) => Effect.as(die(error), deadTransport))
  )
  yield* Deferred.succeed(transportReady, connected)

  const sessionEnd: SessionEndRequest = { event: "session_end", session_id: options.sessionId }
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      const s = yield* Ref.get(state)
      if (s.phase._tag !== "dead" && !s.abandoned && !s.sessionEnded && subscribes(config, "session_end")) {
        // Bounded by timeout_ms even when it is the first exchange; a failure here just kills it.
        yield* send({ event: "session_end", value: sessionEnd, bytes: Framing.encodeLine(sessionEnd) }, config.timeout_ms)
          .pipe(Effect.ignore)
      }
      const dead = yield* Ref.modify(state, (s): [boolean, State] => [s.phase._tag === "dead", { ...s, closing: true }])
      if (dead) yield* terminateOnce
      else yield* connected.close
    })
  )

  const extension: Extension = {
    name,
    config,
    send: (request) => send(request),
    status: Effect.gen(function*() {
      const s = yield* Ref.get(state)
      return {
        name,
        state: s.phase,
        served: s.served,
        stderr_tail: yield* connected.stderrTail,
        pid: connected.pid
      }
    })
  }
  return extension
})
