import { Effect, type Scope } from "effect"

/**
 * SIGHUP (a closed terminal, a dropped ssh session) and SIGQUIT end a Node process outright by default: no
 * finalizer runs, so the extensions' close sequence never does, and their children are orphaned. While an extension
 * process runs, they are raised again as SIGTERM, which an Effect program run with `NodeRuntime.runMain` turns into
 * an interruption (every scope closes, every extension is stopped). A program with a listener of its own for the
 * signal (the CLI has one) decides for itself: this one then does nothing.
 */

const Signals = ["SIGHUP", "SIGQUIT"] as const

const listeners = new Map(
  Signals.map((signal) => [
    signal,
    () => {
      if (process.listenerCount(signal) === 1) process.kill(process.pid, "SIGTERM")
    }
  ])
)

let holders = 0

/** Holds the listeners for the scope: installed with the first holder, removed with the last. */
export const hold: Effect.Effect<void, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    if (holders++ === 0) for (const [signal, listener] of listeners) process.on(signal, listener)
  }),
  () =>
    Effect.sync(() => {
      if (--holders === 0) for (const [signal, listener] of listeners) process.off(signal, listener)
    })
)
