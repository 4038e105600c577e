import { type ExtensionConfig, Framing } from "@abhed/protocol"
import { Cause, Deferred, Duration, Effect, Exit, Queue, type Scope, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import * as NodePath from "node:path"
import type { Extension } from "./Extension.ts"
import * as ExtensionCore from "./ExtensionCore.ts"
import { ExtensionExited, MalformedReply, ReplyTooLong, SpawnFailed, UnsolicitedOutput } from "./ExtensionError.ts"
import * as StderrTail from "./StderrTail.ts"

/**
 * An extension backed by a child process (DESIGN §4, §6): the shared core over the process's pipes.
 *
 * The process leads its own process group, so terminating it reaches its children too. Its death is seen from
 * the process's exit (not from stdout's end: a grandchild may hold stdout open), stdout is read by one fiber
 * that hands each line to the request in flight, and stderr is always drained.
 */

export interface Options {
  readonly sessionId: string
  /** Relative `cwd` resolves against this folder (the config file's); no `cwd` means this folder. */
  readonly baseDir: string
  /** Longest reply line, in bytes. Default 16 MiB. */
  readonly maxLineBytes?: number
}

/**
 * How long, after the process exits, the reader may still take lines it wrote before dying (a reply written just
 * before a crash still counts). Bounded, since a grandchild may keep stdout open forever.
 */
const ExitDrainMillis = 100

const signalOf = (cause: Cause.Cause<unknown>): string => {
  // A death by signal fails `exitCode` with an error whose cause says "…receipt of signal: 'SIGKILL'": the signal
  // is only in that text, somewhere down the chain of causes.
  let error: unknown = Cause.squash(cause)
  for (let depth = 0; depth < 5 && error instanceof Error; depth++) {
    const match = /signal:? '?(SIG[A-Z0-9]+)/.exec(error.message)
    if (match?.[1] !== undefined) return match[1]
    error = error.cause
  }
  return "unknown"
}

export const make = (
  config: ExtensionConfig,
  options: Options
): Effect.Effect<Extension, never, ChildProcessSpawner.ChildProcessSpawner | Scope.Scope> =>
  ExtensionCore.make({
    config,
    sessionId: options.sessionId,
    connect: (events) => connect(config, options, events)
  })

const connect = Effect.fnUntraced(function*(
  config: ExtensionConfig,
  options: Options,
  events: ExtensionCore.TransportEvents
) {
  const name = config.name
  const maxLineBytes = options.maxLineBytes ?? Framing.DefaultMaxLineBytes
  const grace = Duration.millis(config.grace_ms)
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const handle = yield* spawner.spawn(
    ChildProcess.make(config.command, [...config.args], {
      cwd: NodePath.resolve(options.baseDir, config.cwd ?? "."),
      env: { ...config.env },
      extendEnv: true,
      detached: true, // its own process group
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      // The spawner's own cleanup (if ours were skipped) escalates too.
      killSignal: "SIGTERM",
      forceKillAfter: grace
    })
  ).pipe(
    Effect.mapError((error) => new SpawnFailed({ extension: name, command: config.command, detail: error.message }))
  )

  // stdin: one long-lived writer; ending the queue closes the pipe.
  const input = yield* Queue.unbounded<Uint8Array, Cause.Done>()
  yield* Stream.fromQueue(input).pipe(Stream.run(handle.stdin), Effect.ignore, Effect.forkScoped)
  const closeStdin = Effect.asVoid(Queue.end(input))

  // stdout: the one reader. Framing errors map to death causes; a line cut off by the end of the stream is not a
  // reply at all, so it is left to the exit watcher to say why the extension stopped.
  const readerDone = yield* Deferred.make<void>()
  const onStdoutError = (error: unknown): Effect.Effect<void> =>
    Effect.gen(function*() {
      if (!Framing.isFramingError(error)) return // the pipe broke: the exit watcher reports it
      if (error.reason === "LineTooLarge") {
        return yield* events.fail(new ReplyTooLong({ extension: name, max_line_bytes: maxLineBytes }))
      }
      if (error.unterminated === true) return
      const got = error.reason === "InvalidUtf8" ? "invalid UTF-8" : "invalid JSON"
      const event = yield* events.inFlight
      yield* events.fail(
        event === undefined
          ? new UnsolicitedOutput({ extension: name, line: `(${got})` })
          : new MalformedReply({ event, path: "", expected: "one JSON object per line", got })
      )
    })
  yield* Framing.decodeStream(handle.stdout, { maxLineBytes }).pipe(
    Stream.runForEach(events.line),
    Effect.catch(onStdoutError),
    Effect.ensuring(Deferred.succeed(readerDone, undefined)),
    Effect.forkScoped
  )

  // stderr: always drained, logged line by line, last 64 KiB kept.
  const stderr = StderrTail.make()
  const log = (lines: ReadonlyArray<string>) => Effect.forEach(lines, (line) => Effect.logDebug(line), { discard: true })
  yield* handle.stderr.pipe(
    Stream.runForEach((chunk) => log(stderr.push(chunk))),
    Effect.ignore,
    Effect.andThen(Effect.suspend(() => log(stderr.flush()))),
    Effect.annotateLogs({ extension: name }),
    Effect.forkScoped
  )

  // Exit: from the process itself.
  const exited = yield* Deferred.make<void>()
  yield* handle.exitCode.pipe(
    Effect.exit,
    Effect.flatMap((exit) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(exited, undefined)
        yield* Deferred.await(readerDone).pipe(Effect.timeout(Duration.millis(ExitDrainMillis)), Effect.ignore)
        yield* events.fail(
          Exit.isSuccess(exit)
            ? new ExtensionExited({ extension: name, code: exit.value, signal: null })
            : new ExtensionExited({ extension: name, code: null, signal: signalOf(exit.cause) })
        )
      })
    ),
    Effect.forkScoped
  )

  // SIGTERM to the group, SIGKILL after the grace; waits until the whole group is gone.
  const killGroup = handle.kill({ killSignal: "SIGTERM", forceKillAfter: grace }).pipe(Effect.ignore)

  const transport: ExtensionCore.Transport = {
    write: (request) => Effect.asVoid(Queue.offer(input, request.bytes)),
    terminate: Effect.andThen(closeStdin, killGroup),
    close: Effect.gen(function*() {
      yield* closeStdin
      yield* Deferred.await(exited).pipe(Effect.timeout(grace), Effect.ignore)
      // Even after a clean exit: children it left behind in its group are ended too.
      yield* killGroup
    }),
    pid: handle.pid,
    stderrTail: Effect.sync(() => stderr.tail())
  }
  return transport
})
