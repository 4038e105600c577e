import { Framing, makeLineReader, type ReadLine } from "@abhed/protocol"
import { Cause, Clock, Effect, Exit, Option, Queue, Ref, Stream } from "effect"
import { environmentFor } from "@abhed/host/ExtensionEnvironment"
import { describeSpawnError } from "@abhed/host/SpawnProblem"
import { ChildProcess, type ChildProcessSpawner } from "effect/process"
import {
  BurstSize,
  burst,
  defaultCall,
  type PlannedRequest,
  requestId,
  type SampleCall,
  sequence,
  sequenceFor
} from "./CheckPlan.ts"
import {
  BeforeFirstRequest,
  type Exchange,
  type ExitObservation,
  type Observation,
  type StrayLine
} from "./CheckResult.ts"

/**
 * Talks to one extension process as a host would, and records what happened (`Observation`); `CheckResult.ts`
 * judges it. Two processes are started: the first gets every event one at a time, the unicode request and the
 * unknown event, then its stdin is closed and its exit awaited; the second gets `session_start`, then a burst of
 * requests written back-to-back.
 */

export interface CheckOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** Per reply (docs/design.md#failures `timeout_ms`). */
  readonly timeoutMs: number
  /** For the first reply of each process, which includes the extension's start-up (`startup_timeout_ms`). */
  readonly startupTimeoutMs: number
  /** How long stdout is watched for unsolicited lines before the first request and after each reply. */
  readonly quietMs: number
  /** How long the extension has to exit after its stdin closes (the host's `grace_ms`). */
  readonly graceMs: number
  readonly burstSize?: number | undefined
  /** The tool and args of the sample tool_call and tool_result (`--call`); default `defaultCall`. */
  readonly call?: SampleCall | undefined
}

interface Line {
  readonly text: string
  /** Whether the host's reader parsed it as JSON (it has: no second parse here). */
  readonly json: boolean
  readonly at: number
}

type Next = Line | "timeout" | "eof"

const now = Effect.map(Clock.currentTimeNanos, (n) => Number(n) / 1e6)
const StderrTailBytes = 4096
/**
 * Lines read ahead of the checks: past this the reader waits, so the extension's stdout pipe fills and a flood
 * (`yes '{}'`) is held back by the pipe instead of piling up in memory.
 */
const LinesAhead = 1024
/** Unsolicited lines kept for the report; the rest of a flood is only counted (`Observation.stray_dropped`). */
export const MaxStrayLines = 1000

/** A running extension: write lines, read lines with a deadline, close stdin, await exit. */
const start = (options: CheckOptions, stderrTail: Ref.Ref<string>) =>
  Effect.gen(function* () {
    const handle = yield* ChildProcess.make(options.command, [...options.args], {
      // As a host starts it (no env settings): not this shell's variables (PYTHONUNBUFFERED, a token), all of them.
      env: environmentFor({ env: {}, env_passthrough: [] }, process.env),
      forceKillAfter: "1 second",
      stdin: { stream: "pipe", endOnDone: true }
    })
    const input = yield* Queue.unbounded<Uint8Array, Cause.Done>()
    // A child that exits early makes the writer fail (EPIPE): that is for the checks to see, not a crash here.
    yield* Stream.fromQueue(input).pipe(Stream.run(handle.stdin), Effect.ignore, Effect.forkScoped)
    const lines = yield* Queue.bounded<Line, Cause.Done>(LinesAhead)
    // Cut into lines by the host's own reader (protocol's LineReader): what it ignores (empty lines), rejects (not
    // UTF-8, over 16 MiB) or does not see (a last line without its newline) is judged here as the host would.
    const reader = makeLineReader({ maxLineBytes: Framing.DefaultMaxLineBytes, keepText: true })
    // Past the limit the host reads nothing more: one placeholder line, then this reader stops too.
    let overLimit = false
    yield* handle.stdout.pipe(
      Stream.takeWhile(() => !overLimit),
      Stream.map((chunk: Uint8Array): ReadonlyArray<Omit<Line, "at">> => {
        const { lines: read, tooLong } = reader.read(chunk)
        const seen = read.map(lineOf)
        if (!tooLong) return seen
        overLimit = true
        return [...seen, { text: TooLongLine, json: false }]
      }),
      Stream.flattenIterable,
      Stream.runForEach((line) => Effect.flatMap(now, (at) => Queue.offer(lines, { ...line, at }))),
      Effect.ignore,
      Effect.andThen(Queue.end(lines)),
      Effect.forkScoped
    )
    // stderr is drained (a full pipe would block the extension) and its end kept for the report.
    yield* handle.stderr.pipe(
      Stream.decodeText(),
      Stream.runForEach((chunk) => Ref.update(stderrTail, (t) => (t + chunk).slice(-StderrTailBytes))),
      Effect.ignore,
      Effect.forkScoped
    )
    const next = (ms: number): Effect.Effect<Next> =>
      Queue.take(lines).pipe(
        Effect.timeoutOption(Math.max(0, ms)),
        Effect.map((o): Next => Option.getOrElse(o, () => "timeout" as const)),
        Effect.catch(() => Effect.succeed("eof" as const))
      )
    const write = (requests: ReadonlyArray<PlannedRequest>) =>
      Effect.flatMap(now, (at) =>
        Effect.as(
          Queue.offerAll(
            input,
            requests.map((r) => Framing.encodeLine({ ...r.request, id: requestId(r) }))
          ),
          at
        )
      )
    const closeStdin = Queue.end(input)
    return { handle, next, write, closeStdin }
  })

type Io = Effect.Success<ReturnType<typeof start>>

/** Stands for a line that is not UTF-8: not JSON, so noise (the host kills the extension for it). */
const NotUtf8Line = "(a line that is not UTF-8)"
/** Stands for a line past the host's limit, after which the host reads nothing more (reply_too_long). */
const TooLongLine = `(a line longer than ${Framing.DefaultMaxLineBytes} bytes: the host stops reading there)`

const lineOf = (line: ReadLine): Omit<Line, "at"> => ({ text: line.text ?? NotUtf8Line, json: line._tag === "Json" })

/** The unsolicited lines seen: the first `MaxStrayLines` kept, the rest counted. */
interface Stray {
  readonly kept: Array<StrayLine>
  dropped: number
}

const keep = (stray: Stray, line: StrayLine): void => {
  if (stray.kept.length < MaxStrayLines) stray.kept.push(line)
  else stray.dropped++
}

/**
 * The next line before `deadline`. The deadline is checked before each take, not left to the take's timeout: with a
 * line always ready (a flood), a take would never time out and the wait would never end.
 */
const nextBefore = (io: Io, deadline: number): Effect.Effect<Next> =>
  Effect.flatMap(now, (t) => (t >= deadline ? Effect.succeed("timeout" as const) : io.next(deadline - t)))

/** Watch stdout for `ms`: every line that arrives is stray (nothing is in flight). */
const collectStray = (io: Io, where: string, ms: number, stray: Stray): Effect.Effect<"eof" | "quiet"> =>
  Effect.gen(function* () {
    const deadline = (yield* now) + ms
    while (true) {
      const n = yield* nextBefore(io, deadline)
      if (n === "timeout") return "quiet"
      if (n === "eof") return "eof"
      keep(stray, { where, text: n.text, json: n.json })
    }
  })

/**
 * Wait for the reply to `planned`, written at `from`, until `from + ms`. Empty lines never get here (the reader
 * skips them, as the host does); lines read before `from` are stray; non-JSON lines (a line of spaces among them: the
 * host cannot parse it either) are noise and the wait goes on, so one stray log line does not hide the real reply.
 */
const awaitReply = (io: Io, planned: PlannedRequest, from: number, ms: number, stray: Stray) =>
  Effect.gen(function* () {
    while (true) {
      const n = yield* nextBefore(io, from + ms)
      if (n === "timeout") return { planned, outcome: { _tag: "timed_out", waited_ms: ms } } satisfies Exchange
      if (n === "eof") return { planned, outcome: { _tag: "eof" } } satisfies Exchange
      if (!n.json || n.at < from) {
        // A line read before the request was written is not its reply, whatever it holds (a flood read ahead).
        keep(stray, { where: `while waiting for the reply to ${planned.label}`, text: n.text, json: n.json })
        continue
      }
      return { planned, outcome: { _tag: "replied", text: n.text, latency_ms: n.at - from } } satisfies Exchange
    }
  })

const skipped = (requests: ReadonlyArray<PlannedRequest>, why: string): ReadonlyArray<Exchange> =>
  requests.map((planned) => ({ planned, outcome: { _tag: "skipped", why } }))

const failureWhy = (x: Exchange): string | undefined =>
  x.outcome._tag === "timed_out"
    ? `${x.planned.label} timed out: a late reply would be matched to the wrong request`
    : x.outcome._tag === "eof"
      ? `stdout closed after ${x.planned.label}`
      : undefined

/** The first process: one request at a time, then close stdin and await a clean exit. */
const runSequence = (options: CheckOptions, stray: Stray, stderrTail: Ref.Ref<string>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const io = yield* start(options, stderrTail)
      yield* collectStray(io, BeforeFirstRequest, options.quietMs, stray)
      const exchanges: Array<Exchange> = []
      let stop: string | undefined
      for (const [i, planned] of sequenceFor(options.call ?? defaultCall).entries()) {
        if (stop !== undefined) {
          exchanges.push(...skipped([planned], stop))
          continue
        }
        const from = yield* io.write([planned])
        const x = yield* awaitReply(io, planned, from, i === 0 ? options.startupTimeoutMs : options.timeoutMs, stray)
        exchanges.push(x)
        stop = failureWhy(x)
        if (stop === undefined) yield* collectStray(io, `after the reply to ${planned.label}`, options.quietMs, stray)
      }
      yield* io.closeStdin
      const closedAt = yield* now
      const exited = yield* io.handle.exitCode.pipe(Effect.timeoutOption(options.graceMs), Effect.exit)
      // Whatever is still buffered on stdout arrived after the last reply.
      yield* collectStray(io, "after stdin closed", Math.min(options.quietMs, 200), stray)
      const exit: ExitObservation = Exit.isFailure(exited)
        ? { _tag: "killed", detail: killedBy(Cause.pretty(exited.cause)) }
        : Option.isNone(exited.value)
          ? { _tag: "still_running", waited_ms: options.graceMs }
          : { _tag: "exited", code: exited.value.value, after_ms: Math.round((yield* now) - closedAt) }
      return { exchanges, exit }
    })
  )

/**
 * The signal that ended the process, from effect/process's failure ("Process interrupted due to receipt of signal:
 * 'SIGKILL'"), or the failure's first line when it names none.
 */
const killedBy = (failure: string): string =>
  /signal: '([A-Z0-9]+)'/.exec(failure)?.[1] ?? failure.split("\n")[0] ?? "a signal"

/** The second process: session_start, then the burst written all at once; replies are read in order. */
const runBurst = (options: CheckOptions, stray: Stray, stderrTail: Ref.Ref<string>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const io = yield* start(options, stderrTail)
      const first = sequence[0]
      const planned = burst(options.burstSize ?? BurstSize)
      if (first === undefined) return []
      const warmup = yield* awaitReply(io, first, yield* io.write([first]), options.startupTimeoutMs, {
        kept: [],
        dropped: 0
      })
      const why = failureWhy(warmup)
      if (why !== undefined) return skipped(planned, `burst process: ${why}`)
      let previous = yield* io.write(planned)
      const exchanges: Array<Exchange> = []
      let stop: string | undefined
      for (const p of planned) {
        if (stop !== undefined) {
          exchanges.push(...skipped([p], stop))
          continue
        }
        // Pipelined: reply i can only start once reply i-1 is out, so its clock starts then.
        const x = yield* awaitReply(io, p, previous, options.timeoutMs, stray)
        exchanges.push(x)
        if (x.outcome._tag === "replied") previous += x.outcome.latency_ms
        stop = failureWhy(x)
      }
      if (stop === undefined) yield* collectStray(io, "after the burst", options.quietMs, stray)
      return exchanges
    })
  )

/** Runs every check against the extension and returns what was observed. Never fails: failures are observations. */
export const observe = (
  options: CheckOptions
): Effect.Effect<Observation, never, ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.gen(function* () {
    const stderrTail = yield* Ref.make("")
    const stray: Stray = { kept: [], dropped: 0 }
    const first = yield* Effect.result(runSequence(options, stray, stderrTail))
    if (first._tag === "Failure") {
      return {
        spawn: {
          ok: false,
          detail: `could not start ${options.command}: ${describeSpawnError(options.command, first.failure, process.cwd())}`
        },
        sequence: [],
        burst: [],
        stray: stray.kept,
        exit: { _tag: "not_run", why: "the extension did not start" },
        stray_dropped: stray.dropped,
        stderr_tail: yield* Ref.get(stderrTail)
      } satisfies Observation
    }
    const second = yield* Effect.result(runBurst(options, stray, stderrTail))
    return {
      spawn: { ok: true },
      sequence: first.success.exchanges,
      burst: second._tag === "Success" ? second.success : [],
      stray: stray.kept,
      exit: first.success.exit,
      stray_dropped: stray.dropped,
      stderr_tail: yield* Ref.get(stderrTail)
    } satisfies Observation
  })
