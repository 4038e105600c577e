import {
  decodeReply,
  type DecodedReply,
  type EventName,
  type ExtensionConfig,
  Framing,
  MalformedReply,
  replyIdOf,
  type ReadLine,
  type SessionEndRequest,
  shapeJson,
  type WithId
} from "@abhed/protocol"
import { Cause, Clock, Deferred, Duration, Effect, Exit, Result, Scope } from "effect"
import { type EncodedRequest, type Extension, type ExtensionState, type StartedExchange, subscribes } from "./Extension.ts"
import {
  type DeathCause,
  deathCauseOf,
  describeDeathCause,
  ExtensionDead,
  type ExtensionError,
  ExtensionTimeout,
  type SpawnFailed,
  stderrOf,
  UnsolicitedOutput
} from "./ExtensionError.ts"

/**
 * The behaviour every extension shares, whatever carries its bytes (docs/design.md#failures): one request in flight (FIFO),
 * the startup timeout on the first exchange and `timeout_ms` after it, attribution of reply lines, reply ids,
 * decoding, death for good on any failure, and the close sequence. A `Transport` (a process's pipes, or a fake's
 * handler) only moves requests out and lines back, so process-backed and fake extensions behave alike by
 * construction.
 *
 * Attribution (docs/design.md#failures): a line belongs to the request in flight when its bytes were read. The transport calls
 * `read` synchronously from its read callback with the complete lines of that read, and the request becomes the
 * one in flight in the same synchronous step that writes its bytes; so no line read before a request was written
 * can be taken as its reply, whatever the scheduler does next. State is plain variables for that reason: every
 * change to it is one synchronous step, which is also what the hot path wants (no Ref, no fiber per exchange).
 */

/** Every failure that kills an extension (`ExtensionDead` is what later requests get). */
export type DeathError = Exclude<ExtensionError, ExtensionDead>

export interface Transport {
  /**
   * Write one request's bytes now, synchronously: the core calls it in the same step that makes the request the
   * one in flight. Never fails: a broken pipe shows up as an exit or a timeout.
   */
  readonly write: <E extends EventName>(request: EncodedRequest<E>) => void
  /**
   * Call `then` once every byte the extension wrote before this call has been read and reported through `read`
   * (a process: after the event loop's next poll, `PollBarrier`); the core writes the request in `then`. So bytes
   * written before a request existed cannot be its reply, however late the event loop would have delivered them.
   * A transport with nothing in between (a fake) calls `then` at once. Not called when the extension's `reply_ids`
   * is "required": then no such line can pass for a reply anyway.
   */
  readonly catchUp: (then: () => void) => void
  /** After a death: stop the extension now (a process: SIGTERM its group, SIGKILL after the grace). */
  readonly terminate: Effect.Effect<void>
  /** At scope close while alive: stop it gracefully (close stdin, wait a grace, then terminate). */
  readonly close: Effect.Effect<void>
  readonly pid: number | undefined
  readonly stderrTail: Effect.Effect<string>
}

/** What a transport reports to the core, synchronously, from where it reads. */
export interface TransportEvents {
  /** The complete non-blank lines of one read, in order (possibly from a fake: one reply). */
  readonly read: (lines: ReadonlyArray<ReadLine>) => void
  /** A failure found by the transport (exit, a line too long, …): the extension dies. */
  readonly fail: (error: DeathError) => void
}

/** A transport with nothing behind it: what an extension that never started has. */
export const deadTransport: Transport = {
  write: () => undefined,
  catchUp: (then) => then(),
  terminate: Effect.void,
  close: Effect.void,
  pid: undefined,
  stderrTail: Effect.succeed("")
}

interface InFlight {
  readonly event: EventName
  readonly id: string
  /** Called once, synchronously, with the reply line or what ended the exchange without one. */
  readonly settle: (reply: Exit.Exit<unknown, ExtensionError>) => void
  readonly timeoutMs: number
  /** When the reply is due, on the Clock (the timeout counts from the write). */
  readonly deadline: number
}

/**
 * The host's request ids are short tokens (decimal counters: IdCounter; an embedder's own, such as "c2"): an `id`
 * that looks like one is shown as it is, what could be content is not.
 */
const isHostId = (s: string): boolean => /^[A-Za-z0-9_.:-]{1,16}$/.test(s)

/**
 * A line the extension wrote where no reply was due, by its shape: its strings by their length only (protocol's
 * `shapeJson`), but for its own `id` when it looks like the host's. Such a line may echo anything the extension
 * saw, and the death cause reaches the audit, the log and the model's notes.
 */
const describeLine = (line: ReadLine): string =>
  line._tag === "Json"
    ? shapeJson(line.value, 200, (key, s) => key === "id" && isHostId(s))
    : line._tag === "Invalid"
    ? `(${line.got}, ${line.bytes} bytes)`
    : `more than ${line.count - 1} blank lines in a row`

/** A reply's `id` for the mismatch message: as it is when it looks like the host's, else by its shape. */
const showId = (id: unknown): string => (typeof id === "string" && isHostId(id) ? JSON.stringify(id) : shapeJson(id, 60))

/**
 * Why a read with more lines than replies due is out of step, naming the stray line rather than the reply: the one
 * that carries the request's id is its reply, so the stray is another; without ids, the first (a banner, a debug
 * print, an earlier stray reply: whatever came before the reply). A stray carrying another id says so.
 */
const describeStray = (lines: ReadonlyArray<ReadLine>, current: InFlight | undefined): string => {
  const reply = current === undefined
    ? -1
    : lines.findIndex((line) => line._tag === "Json" && replyIdOf(line.value) === current.id)
  const stray = lines[reply === 0 ? 1 : 0]
  if (stray === undefined) return ""
  const id = stray._tag === "Json" ? replyIdOf(stray.value) : undefined
  return current !== undefined && id !== undefined && id !== current.id
    ? `reply to id ${showId(id)} while ${showId(current.id)} was in flight`
    : describeLine(stray)
}

export interface CoreOptions<R> {
  readonly config: ExtensionConfig
  readonly sessionId: string
  readonly connect: (events: TransportEvents) => Effect.Effect<Transport, SpawnFailed, R | Scope.Scope>
}

export const make = Effect.fnUntraced(function*<R>(options: CoreOptions<R>) {
  const { config } = options
  const name = config.name
  const readBeforeWrite = config.reply_ids !== "required"
  const scope = yield* Effect.scope
  const clock = yield* Clock.clockWith(Effect.succeed)
  // Exchange fibers live in a child scope made now, so it closes after every finalizer added later: the host's
  // session_end dispatch (and this extension's own close sequence) can still run exchanges while closing.
  const exchangesScope = yield* Scope.fork(scope, "sequential")
  /*
   * The permit: one exchange at a time, waiters served in arrival order (FIFO). Plain state rather than a
   * Semaphore, so that a free permit can be taken in a synchronous step (`beginNow`, the fan-out's path) and a
   * release hands it straight to the next waiter. `busy` is false only when nobody waits.
   */
  let busy = false
  const waiters: Array<Deferred.Deferred<void>> = []
  const release = (): void => {
    const next = waiters.shift()
    if (next === undefined) busy = false
    else Deferred.doneUnsafe(next, Effect.void) // the permit passes to it: `busy` stays true
  }
  const take: Effect.Effect<void> = Effect.suspend(() => {
    // `send` checks `busy` before it asks for this, but the fiber may yield to the scheduler in between (its
    // operation budget), and a release meanwhile leaves the permit free with nobody to hand it on: take it here.
    if (!busy) {
      busy = true
      return Effect.void
    }
    const turn = Deferred.makeUnsafe<void>()
    waiters.push(turn)
    return Effect.onInterrupt(Deferred.await(turn), () =>
      Effect.sync(() => {
        const at = waiters.indexOf(turn)
        if (at >= 0) waiters.splice(at, 1)
        else release() // handed the permit already: pass it on
      }))
  })

  let phase: ExtensionState = { _tag: "starting" }
  let inFlight: InFlight | undefined
  /** Exchanges begun (the first gets `startup_timeout_ms`). */
  let exchanges = 0
  let served = 0
  /** The scope is closing: exits are expected now, and the close sequence does the killing. */
  let closing = false
  /** An exchange was interrupted after its write: a reply may still come, so the stream is out of step. */
  let abandoned = false
  /**
   * Exchanges whose caller went away (interrupted) and that still wait for their reply, holding the permit. At
   * close, session_end would queue behind them for up to a timeout each, and then wait its own: an interrupted
   * agent (Ctrl-C) would wait all that. The close sequence skips session_end while there is one.
   */
  let orphanedExchanges = 0
  /** session_end was sent already (by the host, which audits it): the close sequence does not send it again. */
  let sessionEnded = false
  let transport: Transport = deadTransport
  const transportReady = Deferred.makeUnsafe<void>()
  /** Completed by a death outside the close sequence: a fiber then terminates the extension in the background. */
  const killRequested = Deferred.makeUnsafe<void>()

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
  const look = Effect.suspend(() => {
    const now = clock.currentTimeMillisUnsafe()
    const due = inFlight
    const late = due !== undefined && due.deadline <= now ? due : undefined
    const wait = due !== undefined && due.deadline > now ? due.deadline - now : undefined
    poke = Deferred.makeUnsafe<void>()
    watchdogTarget = wait === undefined ? Number.POSITIVE_INFINITY : now + wait
    if (late !== undefined) dieNow(new ExtensionTimeout({ extension: name, timeout_ms: late.timeoutMs }))
    return wait === undefined
      ? Deferred.await(poke)
      : Effect.raceFirst(Effect.sleep(Duration.millis(wait)), Deferred.await(poke))
  })
  yield* Effect.forkIn(Effect.forever(look, { disableYield: true }), scope)

  // Termination runs once; whoever comes later (the scope's release) waits for the same run.
  let terminateStarted = false
  const terminated = Deferred.makeUnsafe<void>()
  const terminateOnce = Effect.uninterruptible(
    Effect.suspend(() => {
      if (terminateStarted) return Deferred.await(terminated)
      terminateStarted = true
      return Deferred.await(transportReady).pipe(
        Effect.andThen(Effect.suspend(() => transport.terminate)),
        Effect.ensuring(Deferred.succeed(terminated, undefined))
      )
    })
  )
  // In the background, so the failing request returns at once; the close sequence joins it.
  yield* Effect.forkIn(Effect.andThen(Deferred.await(killRequested), terminateOnce), scope)

  /** Death, in one synchronous step: callable from a read callback. The request in flight fails with `error`. */
  function dieNow(error: DeathError): void {
    if (phase._tag === "dead") return
    const current = inFlight
    inFlight = undefined
    if (!closing) {
      phase = { _tag: "dead", cause: deathCauseOf(error) }
      Deferred.doneUnsafe(killRequested, Effect.void)
    }
    if (current !== undefined) current.settle(Exit.fail(error))
  }

  /** The lines of one read, attributed to the request in flight now (docs/design.md#failures), in one synchronous step. */
  const read = (lines: ReadonlyArray<ReadLine>): void => {
    if (lines.length === 0 || phase._tag === "dead") return
    const current = inFlight
    // Blank lines without end (the reader's bound passed): out of step whatever is in flight.
    const blanks = lines.find((line) => line._tag === "Blanks")
    if (blanks !== undefined) return dieNow(new UnsolicitedOutput({ extension: name, line: describeLine(blanks) }))
    // More lines than requests in flight: the extension is out of step, and no line of this read is applied.
    if (current === undefined || lines.length > 1) {
      return dieNow(new UnsolicitedOutput({ extension: name, line: describeStray(lines, current) }))
    }
    const line = lines[0]
    if (line === undefined || line._tag === "Blanks") return
    if (line._tag === "Invalid") {
      return dieNow(new MalformedReply({ event: current.event, path: "", expected: "one JSON object per line", got: line.got }))
    }
    const id = replyIdOf(line.value)
    if (id !== undefined && id !== current.id) {
      return dieNow(
        new UnsolicitedOutput({ extension: name, line: `reply to id ${showId(id)} while ${showId(current.id)} was in flight` })
      )
    }
    if (id === undefined && config.reply_ids === "required") {
      return dieNow(
        new MalformedReply({
          event: current.event,
          path: "id",
          expected: `the request's id ${showId(current.id)} (reply_ids is "required")`,
          got: "nothing"
        })
      )
    }
    inFlight = undefined
    current.settle(Exit.succeed(line.value))
  }

  const events: TransportEvents = { read, fail: dieNow }
  const deadError = (cause: DeathCause) => {
    const stderr = stderrOf(cause)
    return new ExtensionDead(
      stderr === undefined
        ? { extension: name, cause: describeDeathCause(cause) }
        : { extension: name, cause: describeDeathCause(cause), stderr }
    )
  }

  /**
   * Commit to a request: it is written once whatever the extension wrote before it has been read (`catchUp`,
   * docs/design.md#failures), and from then on its reply belongs to it whatever the caller does. The write is one synchronous
   * step: checking for death, making the request the one in flight, writing its bytes and arming the watchdog
   * happen together, so no line can be read in between (attribution), and a death in between cannot leave the
   * request waiting for a reply that cannot come. Returns the death that stops it from being begun at all.
   */
  const begin = <E extends EventName>(
    request: EncodedRequest<E>,
    timeoutOverride: number | undefined,
    settle: InFlight["settle"]
  ): ExtensionDead | undefined => {
    if (phase._tag === "dead") return deadError(phase.cause)
    const timeoutMs = timeoutOverride ?? (exchanges === 0 ? config.startup_timeout_ms : config.timeout_ms)
    exchanges++
    if (request.event === "session_end") sessionEnded = true
    const write = (): void => {
      // A line read while catching up had nothing in flight (or the process exited): the request is never written.
      if (phase._tag === "dead") return settle(Exit.fail(deadError(phase.cause)))
      const current: InFlight = {
        event: request.event,
        id: request.value.id,
        settle,
        timeoutMs,
        deadline: clock.currentTimeMillisUnsafe() + timeoutMs
      }
      try {
        inFlight = current
        transport.write(request)
        if (current.deadline < watchdogTarget) Deferred.doneUnsafe(poke, Effect.void)
      } catch (defect) {
        // Not the extension's failure: the request ends with the defect (run from the event loop, it must not throw).
        if (inFlight === current) inFlight = undefined
        settle(Exit.die(defect))
      }
    }
    // Nothing is in flight until the write: any complete line read meanwhile is unsolicited and kills. With ids
    // required there is nothing to wait for: a line written before this request cannot carry its id, so it kills
    // the extension whenever it is read.
    if (readBeforeWrite) transport.catchUp(write)
    else write()
    return undefined
  }

  /**
   * The one step after a reply, for every path (`send`, `handOff`, `beginNow`): decode it, count it, go live. A
   * reply that does not decode kills the extension here (every other failure came through `dieNow` already).
   */
  const accept = <E extends EventName>(event: E, json: unknown): Exit.Exit<DecodedReply<E>, ExtensionError> => {
    let decoded: Result.Result<DecodedReply<E>, MalformedReply>
    try {
      decoded = decodeReply(event, json)
    } catch (defect) {
      return Exit.die(defect)
    }
    if (Result.isFailure(decoded)) {
      dieNow(decoded.failure)
      return Exit.fail(decoded.failure)
    }
    served++
    if (phase._tag === "starting") phase = { _tag: "live" }
    return Exit.succeed(decoded.success)
  }

  /**
   * Once begun (written, or to be written when the transport has caught up), the reply belongs to this request
   * whatever the caller does: a caller interrupted while it waits hands the rest of the exchange to a fiber in the
   * extension's scope, which keeps the permit until the reply (or the timeout, or a death) comes, so the next
   * request can never read this one's reply. The common case forks nothing.
   */
  const handOff = <E extends EventName>(reply: Deferred.Deferred<unknown, ExtensionError>, request: EncodedRequest<E>) =>
    Effect.suspend(() => {
      orphanedExchanges++
      return Deferred.await(reply).pipe(
        Effect.flatMap((json) => Effect.suspend(() => accept(request.event, json))),
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            abandoned = true
          })
        ),
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => {
          orphanedExchanges--
          release()
        })),
        Effect.forkIn(exchangesScope, { startImmediately: true }),
        Effect.asVoid
      )
    })

  /**
   * One exchange. The hot path is the permit, one synchronous step (`begin`), the wait for the reply and one
   * synchronous step after it (decode, count, release the permit): no Effect step per stage. A reply that does not
   * decode kills the extension before the permit is released, as every other failure already has.
   */
  const send = <E extends EventName>(
    request: EncodedRequest<E>,
    timeoutOverride?: number
  ): Effect.Effect<DecodedReply<E>, ExtensionError> =>
    Effect.uninterruptibleMask((restore) => {
      // With the permit: the release is a plain call in the same step as the outcome (no Effect step for it).
      const exchange = (): Effect.Effect<DecodedReply<E>, ExtensionError> => {
        let dead: ExtensionDead | undefined
        const reply = Deferred.makeUnsafe<unknown, ExtensionError>()
        try {
          dead = begin(request, timeoutOverride, (exit) => Deferred.doneUnsafe(reply, exit))
        } catch (defect) {
          release()
          return Effect.die(defect)
        }
        if (dead !== undefined) {
          release()
          return Effect.fail(dead)
        }
        return Effect.matchCauseEffect(restore(Deferred.await(reply)), {
          onSuccess: (json): Effect.Effect<DecodedReply<E>, ExtensionError> => {
            const exit = accept(request.event, json)
            release()
            return exit
          },
          // The reply's own failures come from `dieNow` or a death before the write: the extension is dead already.
          onFailure: (cause): Effect.Effect<never, ExtensionError> => {
            if (Cause.hasInterrupts(cause)) return Effect.andThen(handOff(reply, request), Effect.failCause(cause))
            release()
            return Effect.failCause(cause)
          }
        })
      }
      // A free permit is taken in this step; waiting for a taken one may be interrupted (nothing was written
      // yet): requests queue FIFO.
      if (!busy) {
        busy = true
        return exchange()
      }
      return Effect.flatMap(restore(take), exchange)
    })

  /**
   * `send` without a fiber, for the fan-out (Extension.beginNow): only when the permit is free, which also means
   * nobody waits for it (FIFO holds). The same `begin`, so attribution, the timeout and death are as for `send`;
   * the reply is decoded in the step that settles it, and the permit is released there, whether or not the caller
   * still listens, so an abandoned exchange keeps the permit until its reply as `handOff` does.
   */
  const beginNow = <E extends EventName>(request: EncodedRequest<E>): StartedExchange<E> | undefined => {
    if (busy) return undefined
    busy = true
    let result: Exit.Exit<DecodedReply<E>, ExtensionError> | undefined
    let listener: ((exit: Exit.Exit<DecodedReply<E>, ExtensionError>) => void) | undefined
    let orphaned = false
    const end = (exit: Exit.Exit<DecodedReply<E>, ExtensionError>): void => {
      if (result !== undefined) return // once: a defect in `begin` may leave it in flight
      if (orphaned) orphanedExchanges--
      release()
      result = exit
      const notify = listener
      listener = undefined
      notify?.(exit)
    }
    const settle = (reply: Exit.Exit<unknown, ExtensionError>): void => {
      end(Exit.isFailure(reply) ? Exit.failCause(reply.cause) : accept(request.event, reply.value))
    }
    try {
      const dead = begin(request, undefined, settle)
      if (dead !== undefined) end(Exit.fail(dead))
    } catch (defect) {
      end(Exit.die(defect))
    }
    return {
      onDone: (f) => {
        if (result !== undefined) f(result)
        else listener = f
      },
      abandon: () => {
        listener = undefined
        if (result === undefined && !orphaned) {
          orphaned = true
          orphanedExchanges++
        }
      }
    }
  }

  transport = yield* options.connect(events).pipe(
    Effect.catch((error) => Effect.as(Effect.sync(() => dieNow(error)), deadTransport))
  )
  const connected = transport
  Deferred.doneUnsafe(transportReady, Effect.void)

  const sessionEnd: WithId<SessionEndRequest> = { event: "session_end", session_id: options.sessionId, id: `${name}-session-end` }
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      if (phase._tag !== "dead" && !abandoned && orphanedExchanges === 0 && !sessionEnded && subscribes(config, "session_end")) {
        // Bounded by timeout_ms even when it is the first exchange; a failure here just kills it.
        yield* send({ event: "session_end", value: sessionEnd, bytes: Framing.encodeLine(sessionEnd) }, config.timeout_ms)
          .pipe(Effect.ignore)
      }
      const dead = phase._tag === "dead"
      closing = true
      if (dead) yield* terminateOnce
      else yield* connected.close
    })
  )

  const extension: Extension = {
    name,
    config,
    send: (request) => send(request),
    beginNow,
    idle: () => !busy,
    status: Effect.map(connected.stderrTail, (stderr_tail) => ({
      name,
      state: phase,
      served,
      stderr_tail,
      pid: connected.pid
    }))
  }
  return extension
})
