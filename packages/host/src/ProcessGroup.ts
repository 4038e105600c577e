import { MaxTimerMs } from "@abhed/protocol"
import { Effect } from "effect"
import type * as NodeChildProcess from "node:child_process"
import * as OrphanReaper from "./OrphanReaper.ts"

/**
 * A child process that leads its own process group (spawned `detached`), and how to end the whole group
 * (docs/design.md#failures): SIGTERM to the group, a grace, SIGKILL, and a wait until the group is gone, so that
 * children the extension started are ended with it. A helper that left the group (`setsid`) is out of reach:
 * docs/failures.md.
 */

const PollMillis = 10
/** After SIGKILL: how long to wait for the group to disappear (members reparented to PID 1 wait to be reaped). */
const AfterKillMillis = 1000

/** Has Node seen the leader exit? (After that its pid may be reused: never signal it alone again.) */
export const leaderExited = (child: NodeChildProcess.ChildProcess): boolean =>
  child.exitCode !== null || child.signalCode !== null

/** Does the group still exist (a member that can be signalled, or only members that cannot: EPERM)? */
const groupExists = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    return error instanceof Error && "code" in error && error.code === "EPERM"
  }
}

const alive = (child: NodeChildProcess.ChildProcess, pgid: number) => !leaderExited(child) || groupExists(pgid)

const signalGroup = (child: NodeChildProcess.ChildProcess, pgid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: the group is gone. The leader alone, if it is somehow still there and not yet seen to exit.
    if (!leaderExited(child)) child.kill(signal)
  }
}

/** Wait (bounded) until the leader has exited and its group is gone. */
const awaitGone = (child: NodeChildProcess.ChildProcess, pgid: number, millis: number): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const deadline = Date.now() + millis
    let timer: ReturnType<typeof setTimeout> | undefined
    const stop = () => {
      clearTimeout(timer)
      child.removeListener("exit", poll)
    }
    function poll() {
      clearTimeout(timer)
      if (!alive(child, pgid) || Date.now() >= deadline) {
        stop()
        resume(Effect.void)
        return
      }
      timer = setTimeout(poll, PollMillis)
    }
    child.on("exit", poll)
    poll()
    return Effect.sync(stop)
  })

/** SIGTERM to the group; SIGKILL after `graceMillis` if anything of it is left; then wait until it is gone. */
export const terminate = (
  child: NodeChildProcess.ChildProcess,
  pgid: number,
  graceMillis: number
): Effect.Effect<void> =>
  Effect.ensuring(
    endGroup(child, pgid, graceMillis),
    // Seen gone: the watcher of orphans (OrphanReaper.ts) must never signal its id again.
    Effect.sync(() => {
      if (!alive(child, pgid)) OrphanReaper.forget(pgid)
      // A leader Node has not yet seen exit (its exit is read on a later turn): struck off then, if its group is gone.
      else if (!leaderExited(child))
        child.once("exit", () => {
          if (!groupExists(pgid)) OrphanReaper.forget(pgid)
        })
    })
  )

const endGroup = (child: NodeChildProcess.ChildProcess, pgid: number, graceMillis: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (!alive(child, pgid)) return Effect.void
    signalGroup(child, pgid, "SIGTERM")
    return awaitGone(child, pgid, graceMillis).pipe(
      Effect.andThen(
        Effect.suspend(() => {
          if (!alive(child, pgid)) return Effect.void
          signalGroup(child, pgid, "SIGKILL")
          return awaitGone(child, pgid, AfterKillMillis)
        })
      )
    )
  })

/** Wait (bounded) for the leader's exit alone. */
export const awaitExit = (child: NodeChildProcess.ChildProcess, millis: number): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (leaderExited(child)) return resume(Effect.void)
    const done = () => {
      clearTimeout(timer)
      child.removeListener("exit", done)
      resume(Effect.void)
    }
    // setTimeout takes at most MaxTimerMs: longer, Node fires after 1 ms. The config bounds grace_ms; an
    // ExtensionConfig built in code need not have gone through it.
    const timer = setTimeout(done, Math.min(millis, MaxTimerMs))
    child.on("exit", done)
    return Effect.sync(() => {
      clearTimeout(timer)
      child.removeListener("exit", done)
    })
  })
