import { type ExtensionConfig, Framing, makeLineReader } from "@abhed/protocol"
import { Deferred, Duration, Effect, FiberSet, LogLevel, type Scope } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Readable, Writable } from "node:stream"
import type { Extension } from "./Extension.ts"
import * as ExtensionCore from "./ExtensionCore.ts"
import { environmentFor, warnAboutPassthrough } from "./ExtensionEnvironment.ts"
import { ExtensionExited, ReplyTooLong, SpawnFailed } from "./ExtensionError.ts"
import * as HangupSignal from "./HangupSignal.ts"
import { afterPoll } from "./PollBarrier.ts"
import { printable } from "./Printable.ts"
import * as OrphanReaper from "./OrphanReaper.ts"
import * as ProcessGroup from "./ProcessGroup.ts"
import { describeSpawnError } from "./SpawnProblem.ts"
import * as StderrTail from "./StderrTail.ts"

/**
 * An extension backed by a child process (docs/design.md#failures, #architecture): the shared core over the process's
 * pipes.
 *
 * Spawned with `node:child_process` inside a scoped resource, for the raw pipes the hot path and attribution need:
 * a request's bytes are written straight to stdin, and stdout is cut into lines in its `data` callback, where each
 * complete line is attributed to the request in flight at that moment (`ExtensionCore`'s `read`). The process
 * leads its own process group, so terminating it reaches its children too. Its death is seen from the process's
 * exit (not from stdout's end: a grandchild may hold stdout open), stderr is always drained, and once the leader
 * has exited, draining its pipes is bounded by `grace_ms`, after which they are destroyed: a helper that left the
 * group and holds them cannot keep the host open.
 */

export interface Options {
  readonly sessionId: string
  /** Relative `cwd` resolves against this folder (the config file's); no `cwd` means this folder. */
  readonly baseDir: string
  /** Longest reply line, in bytes. Default 16 MiB. */
  readonly maxLineBytes?: number
}

/**
 * How long, after the process exits, lines it wrote before dying may still arrive (a reply written just before a
 * crash still counts) before the exit is reported. Bounded, since a grandchild may keep stdout open forever.
 */
const ExitDrainMillis = 100

export const make = (config: ExtensionConfig, options: Options): Effect.Effect<Extension, never, Scope.Scope> =>
  Effect.andThen(
    warnAboutPassthrough(config),
    ExtensionCore.make({
      config,
      sessionId: options.sessionId,
      connect: (events) => connect(config, options, events)
    })
  )

type Child = NodeChildProcess.ChildProcessByStdio<Writable, Readable, Readable>

/** Why `path` cannot be a working directory, if it cannot. */
const folderProblem = (path: string): string | undefined => {
  try {
    return NodeFs.statSync(path).isDirectory() ? undefined : "is not a folder"
  } catch (error) {
    return error instanceof Error && "code" in error && error.code === "ENOENT"
      ? "does not exist"
      : `cannot be used: ${String(error)}`
  }
}

export const spawn = (config: ExtensionConfig, options: Options) =>
  Effect.callback<Child, SpawnFailed>((resume) => {
    const cwd = NodePath.resolve(options.baseDir, config.cwd ?? ".")
    const failed = (error: unknown) =>
      resume(
        Effect.fail(
          new SpawnFailed({
            extension: config.name,
            command: config.command,
            detail: describeSpawnError(config.command, error, cwd)
          })
        )
      )
    // Node reports a missing working directory as `spawn COMMAND ENOENT`, which blames the command: say which.
    const folder = folderProblem(cwd)
    if (folder !== undefined)
      return failed(new Error(`its working directory ${cwd} ${folder} (cwd, relative to the config's folder)`))
    let child: Child
    try {
      child = NodeChildProcess.spawn(config.command, [...config.args], {
        cwd,
        env: environmentFor(config, process.env),
        detached: true, // its own process group
        stdio: ["pipe", "pipe", "pipe"]
      })
    } catch (error) {
      return failed(error)
    }
    // Listed with the watcher of orphans at once (OrphanReaper.ts): the process may run before the `spawn` event
    // comes, and a host killed in between would leave it unlisted.
    if (child.pid !== undefined) OrphanReaper.watch(child.pid, config.grace_ms)
    // Errors after the start (a failed kill, EPIPE on a pipe) must never crash the host: exits report deaths.
    const ignore = () => undefined
    child.stdin.on("error", ignore)
    child.stdout.on("error", ignore)
    child.stderr.on("error", ignore)
    const onSpawn = () => {
      child.removeListener("error", onError)
      child.on("error", ignore)
      resume(Effect.succeed(child))
    }
    const onError = (error: Error) => {
      child.removeListener("spawn", onSpawn)
      child.on("error", ignore)
      // Not started: nothing of it to end, and its id must not be signalled later.
      if (child.pid !== undefined) OrphanReaper.forget(child.pid)
      destroyPipes(child)
      failed(error)
    }
    child.once("spawn", onSpawn)
    child.once("error", onError)
  })

/**
 * Hands the `data` listeners, synchronously and in order, whatever Node has read from `stream` but not yet emitted
 * (`read()` emits each chunk it returns). In flowing mode Node emits a chunk as it reads it, so this finds nothing;
 * should the stream ever be paused, those bytes are still attributed before the next request is written, not after.
 */
export const flushBuffered = (stream: Readable): void => {
  while (stream.readableLength > 0 && stream.read() !== null) {
    // `read()` has emitted the chunk to the listeners
  }
}

const destroyPipes = (child: Child) => {
  child.stdin.destroy()
  child.stdout.destroy()
  child.stderr.destroy()
}

/** When `stream` has ended or closed (at once if it has). */
export const ended = (stream: Readable): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (stream.readableEnded || stream.destroyed) return resume(Effect.void)
    const done = () => resume(Effect.void)
    stream.once("end", done)
    stream.once("close", done)
    return Effect.sync(() => {
      stream.removeListener("end", done)
      stream.removeListener("close", done)
    })
  })

const connect = Effect.fnUntraced(function* (
  config: ExtensionConfig,
  options: Options,
  events: ExtensionCore.TransportEvents
) {
  const name = config.name
  const maxLineBytes = options.maxLineBytes ?? Framing.DefaultMaxLineBytes
  const grace = config.grace_ms
  const child = yield* acquire(config, options)
  const pid = child.pid ?? 0

  // stdout: split and attributed where it is read (docs/design.md#failures).
  const reader = makeLineReader({ maxLineBytes, maxBlankLines: Framing.MaxBlankLines })
  const onStdout = (chunk: Uint8Array) => {
    const { lines, tooLong } = reader.read(chunk)
    if (lines.length > 0) events.read(lines)
    if (tooLong) events.fail(new ReplyTooLong({ extension: name, max_line_bytes: maxLineBytes }))
  }
  child.stdout.on("data", onStdout)
  // Before each request is written, the event loop polls once (shared by every request begun meanwhile): bytes the
  // extension wrote before the request existed are read and attributed as such, even when the loop was held up
  // and would otherwise deliver them after the write.
  const catchUp = (then: () => void) =>
    afterPoll(() => {
      // Bytes Node has read but not yet emitted are older than the request: they go first.
      if (!child.stdout.destroyed) flushBuffered(child.stdout)
      then()
    })

  const stderr = yield* drainStderr(child, name)

  // Exit: from the process itself. Lines written just before it still count, then the exit is reported; the pipes
  // are drained for at most `grace_ms` after it, then destroyed.
  const exit = Deferred.makeUnsafe<{ readonly code: number | null; readonly signal: string | null }>()
  child.once("exit", (code, signal) => Deferred.doneUnsafe(exit, Effect.succeed({ code, signal })))
  yield* Effect.gen(function* () {
    const { code, signal } = yield* Deferred.await(exit)
    const drain = Effect.all([ended(child.stdout), ended(child.stderr)], { concurrency: 2 })
    // stderr too: its last lines say why it died (`SyntaxError: …`), for the cause.
    yield* drain.pipe(Effect.timeout(Duration.millis(Math.min(ExitDrainMillis, grace))), Effect.ignore)
    // A loop held up past that bound (a loaded machine) runs its timers before it reads: one poll more, so that what
    // was already in the pipes when the bound ran out (the `SyntaxError` line) is read before the cause is made.
    yield* Effect.callback<void>((resume) => afterPoll(() => resume(Effect.void)))
    const why = StderrTail.errorLine(stderr.tail())
    events.fail(
      new ExtensionExited(
        why === undefined ? { extension: name, code, signal } : { extension: name, code, signal, stderr: why }
      )
    )
    yield* drain.pipe(Effect.timeout(Duration.millis(grace)), Effect.ignore)
    destroyPipes(child)
  }).pipe(Effect.forkScoped)

  const closeStdin = Effect.sync(() => {
    child.stdin.end()
  })
  const transport: ExtensionCore.Transport = {
    write: (request) => {
      if (child.stdin.writable) child.stdin.write(request.bytes)
    },
    catchUp,
    // SIGTERM to the group, SIGKILL after the grace; waits until the whole group is gone.
    terminate: Effect.andThen(closeStdin, ProcessGroup.terminate(child, pid, grace)),
    close: Effect.gen(function* () {
      yield* closeStdin
      yield* ProcessGroup.awaitExit(child, grace)
      // Even after a clean exit: children it left behind in its group are ended too.
      yield* ProcessGroup.terminate(child, pid, grace)
    }),
    pid: child.pid,
    stderrTail: Effect.sync(() => stderr.tail())
  }
  return transport
})

/**
 * The child as a scoped resource: whatever happened before, at release its group is ended and its pipes closed.
 * Until then a SIGHUP or SIGQUIT to the host is raised again as SIGTERM, so that the release still runs.
 */
export const acquire = (config: ExtensionConfig, options: Options): Effect.Effect<Child, SpawnFailed, Scope.Scope> =>
  Effect.andThen(
    HangupSignal.hold,
    Effect.acquireRelease(spawn(config, options), (child) =>
      Effect.andThen(
        child.pid === undefined ? Effect.void : ProcessGroup.terminate(child, child.pid, config.grace_ms),
        Effect.sync(() => destroyPipes(child))
      )
    )
  )

/** stderr: always drained, logged line by line at Debug, its last 64 KiB kept (for status and an exit's cause). */
export const drainStderr = Effect.fnUntraced(function* (child: Child, name: string) {
  const stderr = StderrTail.make()
  const runLog = yield* FiberSet.makeRuntime<never, void, never>()
  // Decided once: with debug off (the default) a flood of stderr costs the tail's copy and nothing more, no fiber
  // and no escaping per line (a 4 MiB flood escaped line by line starved the host past the extension's timeout).
  const debug = yield* LogLevel.isEnabled("Debug")
  const log = (lines: ReadonlyArray<string>) => {
    if (debug && lines.length > 0) {
      // Escaped: a log line must not drive the terminal it is shown on (Printable.ts).
      runLog(
        Effect.forEach(lines, (line) => Effect.logDebug(printable(line)), { discard: true }).pipe(
          Effect.annotateLogs({ extension: name })
        )
      )
    }
  }
  child.stderr.on("data", (chunk: Uint8Array) => log(stderr.push(chunk)))
  child.stderr.once("end", () => log(stderr.flush()))
  return stderr
})
