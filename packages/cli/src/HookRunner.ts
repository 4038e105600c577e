import { MaxTimerMs } from "@abhed/protocol"
import { spawn } from "node:child_process"
import { Effect } from "effect"
import type { HookRun } from "./HookOutcome.ts"
import { killRestOfGroup, killTree } from "./ProcessTree.ts"

/**
 * Runs a peer's hook once: the input JSON on its stdin, stdout and stderr collected, bounded by `timeoutMs`. On
 * overrun, or when the caller is interrupted (the adapter is stopped), the hook and every process it started are
 * killed. When the hook's own process exits but something it started still holds its stdout or stderr, the rest of
 * the adapter's process group is killed (ProcessTree.ts says why the hook shares that group).
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

/** After the hook's process exits, how long its pipes may stay open before whatever holds them is ended. */
const PipeGraceMs = 100

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
    let exited = false
    let timedOut = false
    let lingering: ReturnType<typeof setTimeout> | undefined
    const child = spawn(hook.command, [...hook.args], { env: hook.env, stdio: ["pipe", "pipe", "pipe"] })
    const finish = (run: HookRun) => {
      if (done) return
      done = true
      clearTimeout(timer)
      clearTimeout(lingering)
      resume(Effect.succeed(run))
    }
    const timer = setTimeout(() => {
      timedOut = true
      if (child.pid !== undefined && !exited) killTree(child.pid)
      else endLingering()
    }, timerDelay(timeoutMs))
    // Something the hook started outlives it and holds the pipes: end it, or at least stop waiting for it.
    const endLingering = () => {
      if (!killRestOfGroup()) {
        child.stdout.destroy()
        child.stderr.destroy()
      }
    }
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
    child.on("exit", () => {
      exited = true
      lingering = setTimeout(endLingering, PipeGraceMs)
    })
    child.on("close", (code, signal) => {
      if (timedOut) finish({ _tag: "TimedOut", timeoutMs, stderr })
      else if (code !== null) finish({ _tag: "Exited", code, stdout, stderr, ...(stdoutCut ? { stdoutCut } : {}) })
      else finish({ _tag: "Signaled", signal: signal ?? "a signal", stderr })
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      clearTimeout(lingering)
      if (child.pid !== undefined && !exited) killTree(child.pid)
    })
  })
