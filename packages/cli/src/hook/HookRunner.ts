import { MaxTimerMs } from "@abhed/protocol/ConfigSchemaChecks"
import { spawn } from "node:child_process"
import { Effect } from "effect"
import { killPipeHolders, killRestOfGroup, killTree, pipeEnds } from "./ProcessTree.ts"

/**
 * Runs a peer's hook once: the input JSON on its stdin, stdout and stderr collected, bounded by `timeoutMs`.
 *
 * The hook's exit is its answer. Once its process has exited, what it wrote is read for at most `PipeGraceMs`;
 * whatever still holds its stdout or stderr then (a helper started with `setsid`, a double-forked daemon, anything
 * else of the adapter's process group) is killed, and our ends of the pipes are closed at the latest one grace
 * later, so no helper can keep the run waiting. `timeoutMs` bounds the whole run in every case: a hook that has
 * not exited by then is killed with every process it started and everything holding its pipes; one that exited
 * before it is answered with its exit (an exit 2 is a block, not a timeout). When the caller is interrupted (the
 * adapter is stopped), the same is killed. ProcessTree.ts says why the hook has no process group of its own.
 *
 * `node:child_process` directly (not effect/process): this is the per-event hot path, a spawn with plain pipes,
 * and the bench row compares it with a bare spawn (packages/bench, scenario 9).
 */

export interface HookCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
}

/**
 * Kept of stdout (the answer) and stderr (a reason, or a log line); more is cut, from the start for stderr. A cut
 * stdout is reported (`stdoutCut`): what is left of an answer is no answer, and must not pass for one.
 */
export const MaxStdoutBytes = 16 * 1024 * 1024
const MaxStderrBytes = 64 * 1024

/**
 * After the hook's process exits, how long its pipes may stay open before whatever holds them is killed; and, after
 * that, how long before our ends are closed regardless (a holder that could not be found).
 */
const PipeGraceMs = 100

/** What came of running the hook once. */
export type HookRun =
  | {
      readonly _tag: "Exited"
      readonly code: number
      readonly stdout: string
      readonly stderr: string
      /** stdout passed the cap (HookRunner.ts) and what is in `stdout` is only its start. */
      readonly stdoutCut?: boolean
    }
  /** Killed by a signal we did not send (a crash). */
  | { readonly _tag: "Signaled"; readonly signal: string; readonly stderr: string }
  /** Overran `--timeout-ms`: it was killed with every process it started. */
  | { readonly _tag: "TimedOut"; readonly timeoutMs: number; readonly stderr: string }
  | { readonly _tag: "SpawnFailed"; readonly detail: string }

/**
 * `setTimeout` takes at most `MaxTimerMs` (about 24.8 days): given more, Node fires after 1 ms, and every run would
 * "time out" at once. A bound that long is "forever" in practice, so a longer `--timeout-ms` waits this.
 */
const timerDelay = (ms: number): number => Math.min(ms, MaxTimerMs)

export const runHook = (hook: HookCommand, input: string, timeoutMs: number): Effect.Effect<HookRun> =>
  Effect.callback<HookRun>((resume) => {
    let stdout = ""
    let stdoutCut = false
    let stderr = ""
    let done = false
    let exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined
    let grace: ReturnType<typeof setTimeout> | undefined
    const child = spawn(hook.command, [...hook.args], { env: hook.env, stdio: ["pipe", "pipe", "pipe"] })
    // The hook's own ends of its stdout and stderr, read while it runs (a few microseconds): whoever holds them
    // once it has exited is a helper it left behind.
    const held = child.pid === undefined ? [] : pipeEnds(child.pid, [1, 2])
    const exited = (code: number | null, signal: NodeJS.Signals | null): HookRun =>
      code !== null
        ? { _tag: "Exited", code, stdout, stderr, ...(stdoutCut ? { stdoutCut } : {}) }
        : { _tag: "Signaled", signal: signal ?? "a signal", stderr }
    const finish = (run: HookRun) => {
      if (done) return
      done = true
      clearTimeout(timer)
      clearTimeout(grace)
      resume(Effect.succeed(run))
    }
    // Whatever still holds the hook's pipes: killed, wherever it runs, and so is the rest of our process group.
    const killHolders = () => {
      killPipeHolders(held)
      killRestOfGroup()
    }
    // Stop waiting for the pipes, whoever holds them.
    const release = () => {
      killHolders()
      child.stdout.destroy()
      child.stderr.destroy()
    }
    const timer = setTimeout(() => {
      if (exit === undefined) {
        if (child.pid !== undefined) killTree(child.pid)
        release()
        finish({ _tag: "TimedOut", timeoutMs, stderr })
      } else {
        // It exited within the bound: that is the answer, whoever holds the pipes.
        release()
        finish(exited(exit.code, exit.signal))
      }
    }, timerDelay(timeoutMs))
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      const room = MaxStdoutBytes - stdout.length
      if (chunk.length > room) stdoutCut = true
      if (room > 0) stdout += chunk.length > room ? chunk.slice(0, room) : chunk
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-MaxStderrBytes)
    })
    // A hook that exits without reading its input closes the pipe under us: not an error of ours.
    child.stdin.on("error", () => {})
    child.stdin.end(input)
    child.on("error", (error) => {
      finish({ _tag: "SpawnFailed", detail: error.message })
    })
    child.on("exit", (code, signal) => {
      exit = { code, signal }
      // Killing the holders first ends the pipes with EOF, so what the hook wrote before it exited is read whole;
      // a holder that could not be found does not keep the run waiting past the second grace.
      grace = setTimeout(() => {
        killHolders()
        grace = setTimeout(() => {
          child.stdout.destroy()
          child.stderr.destroy()
          finish(exited(code, signal))
        }, PipeGraceMs)
      }, PipeGraceMs)
    })
    child.on("close", (code, signal) => finish(exited(code, signal)))
    return Effect.sync(() => {
      clearTimeout(timer)
      clearTimeout(grace)
      if (child.pid !== undefined && exit === undefined) killTree(child.pid)
      killPipeHolders(held)
      child.stdout.destroy()
      child.stderr.destroy()
    })
  })
