import { Deferred, Effect, Exit } from "effect"

/**
 * One exchange at a time per extension, waiters served in arrival order (FIFO). Plain state rather than a
 * Semaphore, so that a free permit can be taken in a synchronous step (`tryTake`: the fan-out's path, and `send`'s
 * when nobody holds it) and a release hands it straight to the next waiter.
 */
export interface Permit {
  /** Someone holds it. False only when nobody waits either. */
  readonly busy: () => boolean
  /** Takes it in this synchronous step if it is free. */
  readonly tryTake: () => boolean
  /** Takes it, waiting in line when it is held; a waiter interrupted after it was handed the permit passes it on. */
  readonly take: Effect.Effect<void>
  /** Hands it to the next waiter, or frees it. */
  readonly release: () => void
}

export const make = (): Permit => {
  let busy = false
  const waiters: Array<Deferred.Deferred<void>> = []
  const release = (): void => {
    const next = waiters.shift()
    if (next === undefined) busy = false
    else Deferred.doneUnsafe(next, Effect.void) // the permit passes to it: `busy` stays true
  }
  const tryTake = (): boolean => {
    if (busy) return false
    busy = true
    return true
  }
  const take: Effect.Effect<void> = Effect.suspend(() => {
    // A caller checks `busy` before it asks for this, but the fiber may yield to the scheduler in between (its
    // operation budget), and a release meanwhile leaves the permit free with nobody to hand it on: take it here.
    if (tryTake()) return Effect.void
    const turn = Deferred.makeUnsafe<void>()
    waiters.push(turn)
    return Effect.onInterrupt(Deferred.await(turn), () =>
      Effect.sync(() => {
        const at = waiters.indexOf(turn)
        if (at >= 0) waiters.splice(at, 1)
        else release() // handed the permit already: pass it on
      })
    )
  })
  return { busy: () => busy, tryTake, take, release }
}

/** An exchange begun by `beginHeld`: the shape `Extension.beginNow` returns. */
export interface Held<A, E> {
  /** Calls `listener` once, when it ends (at once if it has), unless `abandon` came first. */
  readonly onDone: (listener: (exit: Exit.Exit<A, E>) => void) => void
  /** The caller no longer waits: it runs on, and releases the permit when it ends. */
  readonly abandon: () => void
}

/**
 * Begins an exchange without a fiber (the fan-out's path), only when the permit is free, which also means nobody
 * waits for it (FIFO holds). The permit is released in the step the exchange ends, whether or not the caller still
 * listens, so an abandoned exchange keeps it until its reply as a handed-off one does.
 */
export const beginHeld = <A, E>(
  permit: Permit,
  options: {
    /** Begins it; `end` is called once it ends (in this step or later). A throw is a defect that ends it. */
    readonly begin: (end: (exit: Exit.Exit<A, E>) => void) => void
    /** Counts the exchanges nobody waits for any more: +1 when abandoned before its end, -1 at that end. */
    readonly orphans: (delta: 1 | -1) => void
  }
): Held<A, E> | undefined => {
  if (!permit.tryTake()) return undefined
  let result: Exit.Exit<A, E> | undefined
  let listener: ((exit: Exit.Exit<A, E>) => void) | undefined
  let orphaned = false
  const end = (exit: Exit.Exit<A, E>): void => {
    if (result !== undefined) return // once: a defect in `begin` may leave it in flight
    if (orphaned) options.orphans(-1)
    permit.release()
    result = exit
    const notify = listener
    listener = undefined
    notify?.(exit)
  }
  try {
    options.begin(end)
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
        options.orphans(1)
      }
    }
  }
}
