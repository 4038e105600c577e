import type { DecodedReply, EventName, ExtensionConfig } from "@abhed/protocol"
import { Cause, Clock, Deferred, Effect, Exit, Result, Scope } from "effect"
import * as Attribution from "./Attribution.ts"
import * as CloseSequence from "./CloseSequence.ts"
import type { EncodedRequest, Extension, ExtensionState, StartedExchange } from "./Extension.ts"
import {
  type DeathCause,
  deathCauseOf,
  describeDeathCause,
  ExtensionDead,
  type ExtensionError,
  ExtensionTimeout,
  type SpawnFailed,
  stderrOf
} from "./ExtensionError.ts"
import * as Permit from "./Permit.ts"
import { type DeathError, deadTransport, decode, type Transport, type TransportEvents } from "./Transport.ts"
import * as Watchdog from "./Watchdog.ts"

/**
 * The behaviour every extension shares, whatever carries its bytes (docs/design.md#failures): one request in
 * flight (FIFO, `Permit`), the startup timeout on the first exchange and `timeout_ms` after it (`Watchdog`),
 * attribution of reply lines (`Attribution`), reply ids, decoding, death for good on any failure, and the close
 * sequence (`CloseSequence`). A `Transport` (a process's pipes, or a fake's handler) only moves requests out and
 * lines back. State is plain variables: every change to it is one synchronous step, so a read callback sees it
 * whole (attribution), which is also what the hot path wants (no Ref, no fiber per exchange).
 */

export { type DeathError, deadTransport, type Transport, type TransportEvents } from "./Transport.ts"

export interface CoreOptions<R> {
  readonly config: ExtensionConfig
  readonly sessionId: string
  readonly connect: (events: TransportEvents) => Effect.Effect<Transport, SpawnFailed, R | Scope.Scope>
}

export const make = Effect.fnUntraced(function* <R>(options: CoreOptions<R>) {
  const { config } = options
  const name = config.name
  const idsRequired = config.reply_ids === "required"
  const scope = yield* Effect.scope
  const clock = yield* Clock.clockWith(Effect.succeed)
  // Exchange fibers live in a child scope made now, so it closes after every finalizer added later: the host's
  // session_end dispatch (and this extension's own close sequence) can still run exchanges while closing.
  const exchangesScope = yield* Scope.fork(scope, "sequential")
  const permit = Permit.make()

  let phase: ExtensionState = { _tag: "starting" }
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

  const attribution = Attribution.make({
    extension: name,
    idsRequired,
    dead: () => phase._tag === "dead",
    die: (error) => dieNow(error)
  })
  const watchdog = yield* Watchdog.make<Attribution.InFlight>({
    clock,
    due: attribution.due,
    late: (due) => dieNow(new ExtensionTimeout({ extension: name, timeout_ms: due.timeoutMs })),
    scope
  })
  const terminator = yield* Watchdog.terminator(
    Effect.andThen(
      Deferred.await(transportReady),
      Effect.suspend(() => transport.terminate)
    ),
    scope
  )

  /** Death, in one synchronous step: callable from a read callback. The request in flight fails with `error`. */
  function dieNow(error: DeathError): void {
    if (phase._tag === "dead") return
    const current = attribution.take()
    if (!closing) {
      phase = { _tag: "dead", cause: deathCauseOf(error) }
      terminator.request() // in the background: a death outside the close sequence
    }
    if (current !== undefined) current.settle(Exit.fail(error))
  }

  const events: TransportEvents = { read: attribution.read, fail: dieNow }
  // What every request after the death fails with: made once and reused (a death is for good, its cause fixed);
  // one per refusal (its checks, its stack) was most of what a dead extension cost each request.
  let refusal: ExtensionDead | undefined
  const deadError = (cause: DeathCause): ExtensionDead => {
    if (refusal !== undefined) return refusal
    const stderr = stderrOf(cause)
    refusal = new ExtensionDead({
      extension: name,
      cause: describeDeathCause(cause),
      ...(stderr === undefined ? {} : { stderr })
    })
    return refusal
  }

  /**
   * Commit to a request: it is written once whatever the extension wrote before it has been read (`catchUp`,
   * docs/design.md#failures), and from then on its reply belongs to it whatever the caller does. The write is one
   * synchronous step: checking for death, making the request the one in flight, writing its bytes and arming the
   * watchdog happen together, so no line can be read in between (attribution), and a death in between cannot leave the
   * request waiting for a reply that cannot come. Returns the death that stops it from being begun at all.
   */
  const begin = <E extends EventName>(
    request: EncodedRequest<E>,
    timeoutOverride: number | undefined,
    settle: Attribution.InFlight["settle"]
  ): ExtensionDead | undefined => {
    if (phase._tag === "dead") return deadError(phase.cause)
    const timeoutMs = timeoutOverride ?? (exchanges === 0 ? config.startup_timeout_ms : config.timeout_ms)
    exchanges++
    if (request.event === "session_end") sessionEnded = true
    const write = (): void => {
      // A line read while catching up had nothing in flight (or the process exited): the request is never written.
      if (phase._tag === "dead") return settle(Exit.fail(deadError(phase.cause)))
      const current: Attribution.InFlight = {
        event: request.event,
        id: request.value.id,
        settle,
        timeoutMs,
        deadline: clock.currentTimeMillisUnsafe() + timeoutMs
      }
      attribution.start(current, () => {
        transport.write(request)
        watchdog.arm(current)
      })
    }
    // Nothing is in flight until the write: any complete line read meanwhile is unsolicited and kills. With ids
    // required there is nothing to wait for: a line written before this request cannot carry its id, so it kills
    // the extension whenever it is read.
    if (!idsRequired) transport.catchUp(write)
    else write()
    return undefined
  }

  /**
   * The one step after a reply, for every path (`send`, `handOff`, `beginNow`): decode it, count it, go live. A
   * reply that does not decode kills the extension here (every other failure came through `dieNow` already).
   */
  const accept = <E extends EventName>(event: E, json: unknown): Exit.Exit<DecodedReply<E>, ExtensionError> => {
    const decoded = decode(event, json)
    if (Exit.isFailure(decoded)) {
      const failure = Cause.findError(decoded.cause)
      if (Result.isSuccess(failure)) dieNow(failure.success)
      return decoded
    }
    served++
    if (phase._tag === "starting") phase = { _tag: "live" }
    return decoded
  }

  /**
   * Once begun (written, or to be written when the transport has caught up), the reply belongs to this request
   * whatever the caller does: a caller interrupted while it waits hands the rest of the exchange to a fiber in the
   * extension's scope, which keeps the permit until the reply (or the timeout, or a death) comes, so the next
   * request can never read this one's reply. The common case forks nothing.
   */
  const handOff = <E extends EventName>(
    reply: Deferred.Deferred<unknown, ExtensionError>,
    request: EncodedRequest<E>
  ) =>
    Effect.suspend(() => {
      orphanedExchanges++
      return Deferred.await(reply).pipe(
        Effect.flatMap((json) => Effect.suspend(() => accept(request.event, json))),
        Effect.onInterrupt(() => Effect.sync(() => void (abandoned = true))),
        Effect.ignore,
        Effect.ensuring(
          Effect.sync(() => {
            orphanedExchanges--
            permit.release()
          })
        ),
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
          permit.release()
          return Effect.die(defect)
        }
        if (dead !== undefined) {
          permit.release()
          return Effect.fail(dead)
        }
        return Effect.matchCauseEffect(restore(Deferred.await(reply)), {
          onSuccess: (json): Effect.Effect<DecodedReply<E>, ExtensionError> => {
            const exit = accept(request.event, json)
            permit.release()
            return exit
          },
          // The reply's own failures come from `dieNow` or a death before the write: the extension is dead already.
          onFailure: (cause): Effect.Effect<never, ExtensionError> => {
            if (Cause.hasInterrupts(cause)) return Effect.andThen(handOff(reply, request), Effect.failCause(cause))
            permit.release()
            return Effect.failCause(cause)
          }
        })
      }
      // A free permit is taken in this step; waiting for a taken one may be interrupted (nothing was written
      // yet): requests queue FIFO.
      return permit.tryTake() ? exchange() : Effect.flatMap(restore(permit.take), exchange)
    })

  /**
   * `send` without a fiber, for the fan-out (Extension.beginNow): only when the permit is free. The same `begin`,
   * so attribution, the timeout and death are as for `send`; the reply is decoded in the step that settles it.
   */
  const beginNow = <E extends EventName>(request: EncodedRequest<E>): StartedExchange<E> | undefined =>
    Permit.beginHeld<DecodedReply<E>, ExtensionError>(permit, {
      begin: (end) => {
        const dead = begin(request, undefined, (reply) =>
          end(Exit.isFailure(reply) ? Exit.failCause(reply.cause) : accept(request.event, reply.value))
        )
        if (dead !== undefined) end(Exit.fail(dead))
      },
      orphans: (delta) => {
        orphanedExchanges += delta
      }
    })

  transport = yield* options.connect(events).pipe(
    Effect.catch((error) =>
      Effect.as(
        Effect.sync(() => dieNow(error)),
        deadTransport
      )
    )
  )
  const connected = transport
  Deferred.doneUnsafe(transportReady, Effect.void)

  yield* Effect.addFinalizer(() =>
    CloseSequence.run({
      config,
      sessionId: options.sessionId,
      mayEndSession: () => phase._tag !== "dead" && !abandoned && orphanedExchanges === 0 && !sessionEnded,
      send,
      closing: () => {
        closing = true
        return phase._tag === "dead"
      },
      terminate: terminator.terminate,
      close: connected.close
    })
  )

  const extension: Extension = {
    name,
    config,
    send: (request) => send(request),
    beginNow,
    idle: () => !permit.busy(),
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
