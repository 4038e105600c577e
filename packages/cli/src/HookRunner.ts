import { spawn } from "node:child_process"
import { Effect } from "effect"
import type { HookRun } from "./HookOutcome.ts"

/**
 * Runs a peer's hook once: the input JSON on its stdin, stdout and stderr collected, bounded by `timeoutMs`. The
 * hook gets a process group of its own; when its leader exits, or the time is up, or the caller is interrupted
 * (the adapter is stopped), the whole group is killed, so nothing it started outlives the run.
 *
 * `node:child_process` directly (not effect/process): this is the per-event hot path, a spawn with plain pipes,
 * and the bench row compares it with a bare spawn (packages/bench, scenario 8).
 */

export interface HookCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
}

/** Kept of stdout (the answer) and stderr (a reason, or a log line); more is cut, from the start for stderr. */
const MaxStdoutBytes = 16 * 1024 * 1024
const MaxStderrBytes = 64 * 1024

const killGroup = (pid: number | undefined) => {
  if (pid === undefined) return
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // ESRCH: the group is already gone.
  }
}

export const runHook = (hook: HookCommand, input: string, timeoutMs: number): Effect.Effect<HookRun> =>
  Effect.callback<HookRun>((resume) => {
    let stdout = ""
    let stderr = ""
    let done = false
    let timedOut = false
    const child = spawn(hook.command, [...hook.args], { detached: true, env: hook.env, stdio: ["pipe", "pipe", "pipe"] })
    const finish = (run: HookRun) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resume(Effect.succeed(run))
    }
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child.pid)
    }, timeoutMs)
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (stdout.length < MaxStdoutBytes) stdout += chunk
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
    // The leader is gone: end the rest of its group (a helper holding the pipes open would stall the run).
    child.on("exit", () => killGroup(child.pid))
    child.on("close", (code, signal) => {
      if (timedOut) finish({ _tag: "TimedOut", timeoutMs, stderr })
      else if (code !== null) finish({ _tag: "Exited", code, stdout, stderr })
      else finish({ _tag: "Signaled", signal: signal ?? "a signal", stderr })
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      killGroup(child.pid)
    })
  })
