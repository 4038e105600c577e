import { type Clock, Deferred, Duration, Effect, type Scope } from "effect"

/**
 * The timeout of the request in flight, and the termination that follows a death, each run by one fiber per
 * extension in its scope.
 *
 * One watchdog fiber per extension, not `Effect.timeout` per exchange. Measured, the per-exchange race (two
 * fibers, a timer set and cleared) was ~10 µs of a ~100 µs dispatch (docs/benchmarks.md). The watchdog sleeps until
 * the deadline of the request in flight and reports it late if it is still due; under steady traffic it wakes
 * about once per `timeout_ms`, not once per request. It sleeps on the Clock, so TestClock drives it.
 */

/** What the watchdog watches: a request with its deadline on the Clock. */
export interface Deadline {
  readonly deadline: number
}

export interface Watchdog {
  /** Tells it of a request just made due (in the same synchronous step), so it wakes in time for its deadline. */
  readonly arm: (due: Deadline) => void
}

export const make = <D extends Deadline>(options: {
  readonly clock: Clock.Clock
  /** The request due now, if any. */
  readonly due: () => D | undefined
  /** Called once the request due is past its deadline, in one synchronous step. */
  readonly late: (due: D) => void
  readonly scope: Scope.Scope
}): Effect.Effect<Watchdog> =>
  Effect.suspend(() => {
    const { clock, due, late } = options
    let target = Number.POSITIVE_INFINITY // when the watchdog will next look
    let poke = Deferred.makeUnsafe<void>() // wakes it early: a request due before `target`
    // Each look is one synchronous step (state, time, next target and poke together), so a request armed while
    // the watchdog runs is either seen by this look or pokes the next wait: it can never be missed.
    const look = Effect.suspend(() => {
      const now = clock.currentTimeMillisUnsafe()
      const current = due()
      const wait = current !== undefined && current.deadline > now ? current.deadline - now : undefined
      poke = Deferred.makeUnsafe<void>()
      target = wait === undefined ? Number.POSITIVE_INFINITY : now + wait
      if (current !== undefined && current.deadline <= now) late(current)
      return wait === undefined
        ? Deferred.await(poke)
        : Effect.raceFirst(Effect.sleep(Duration.millis(wait)), Deferred.await(poke))
    })
    const watchdog: Watchdog = {
      arm: (request) => {
        if (request.deadline < target) Deferred.doneUnsafe(poke, Effect.void)
      }
    }
    return Effect.as(Effect.forkIn(Effect.forever(look, { disableYield: true }), options.scope), watchdog)
  })

/** Stops a dead extension, once: asked for from the synchronous step of a death, run in the background. */
export interface Terminator {
  /** Asks for the termination (callable from a read callback); the failing request does not wait for it. */
  readonly request: () => void
  /** Runs it now, or waits for the run already begun: whoever comes later (the scope's release) waits for it. */
  readonly terminate: Effect.Effect<void>
}

export const terminator = (terminate: Effect.Effect<void>, scope: Scope.Scope): Effect.Effect<Terminator> =>
  Effect.suspend(() => {
    let started = false
    const done = Deferred.makeUnsafe<void>()
    const requested = Deferred.makeUnsafe<void>()
    const once = Effect.uninterruptible(
      Effect.suspend(() => {
        if (started) return Deferred.await(done)
        started = true
        return Effect.ensuring(terminate, Deferred.succeed(done, undefined))
      })
    )
    // In the background, so the failing request returns at once; the close sequence joins it.
    return Effect.as(Effect.forkIn(Effect.andThen(Deferred.await(requested), once), scope), {
      request: () => Deferred.doneUnsafe(requested, Effect.void),
      terminate: once
    })
  })
