import { Console } from "node:console"

/**
 * The serve loop of an extension process (`@abhed/extension/Serve`), parameterised by what answers one line: the
 * loop under `Extension.main`, and under `abhed-ext hook`. It reads request lines from stdin and writes exactly one
 * reply per line, in order; nothing else reaches stdout while it serves (`console` and `process.stdout.write` go to
 * stderr, put back when it ends); writes wait for stdout to drain. It loads nothing from `effect`.
 *
 * `answer` may reply at once (a string) or later (a promise): a reply that is ready at once is written at once, and
 * the next line waits for the one before. It may also `stop`: the line cannot be answered (a request the extension
 * cannot read, docs/design.md#unreadable-requests), no reply is written, and serving ends so that the caller exits
 * and the host applies the extension's `on_failure`.
 */

/** Serving ends without a reply to the line at hand, for `reason`. */
export interface Stop {
  readonly _tag: "Stop"
  readonly reason: string
}

export const stop = (reason: string): Stop => ({ _tag: "Stop", reason })

/** The reply line to one request line (newline included), or `Stop`. */
export type Reply = string | Stop

/** Answers one request line (without its line end; never blank). */
export type Answer = (line: string) => Reply | PromiseLike<Reply>

/**
 * How serving ended: stdin closed and every reply was written (`Ended`); stdout failed (the host stopped reading,
 * EPIPE: `StdoutClosed`); or `answer` stopped, or threw or rejected, or stdin closed while an answer never settled
 * (a `Stop` naming it).
 */
export type Served = { readonly _tag: "Ended" } | { readonly _tag: "StdoutClosed" } | Stop

/** Prints whatever was thrown, without running into a second throw. */
const describeThrown = (error: unknown): string => {
  try {
    return error instanceof Error ? (error.stack ?? error.message) : String(error)
  } catch {
    return "a value that cannot be shown"
  }
}

/**
 * Calls `onLine` for each line of `input` (without its `\n` or `\r\n`), skipping blank ones, and `onEnd` when it
 * closes (after an unterminated last line). A line is only joined once its end arrives, so a large request costs
 * one pass over its chunks.
 */
const readLines = (input: NodeJS.ReadStream, onLine: (line: string) => void, onEnd: () => void): void => {
  let parts: Array<string> = []
  const emit = (text: string) => {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text
    if (line.trim() !== "") onLine(line)
  }
  input.setEncoding("utf8") // a multi-byte character split across chunks is decoded whole
  input.on("data", (chunk: string) => {
    let start = 0
    let newline = chunk.indexOf("\n")
    while (newline !== -1) {
      parts.push(chunk.slice(start, newline))
      emit(parts.join(""))
      parts = []
      start = newline + 1
      newline = chunk.indexOf("\n", start)
    }
    if (start < chunk.length) parts.push(chunk.slice(start))
  })
  input.on("end", () => {
    if (parts.length > 0) emit(parts.join(""))
    onEnd()
  })
}

/**
 * Serve stdin with `answer` until it ends (see the module's header). Resolves once stdin has closed and every
 * reply is written, or at the first `Stop`, or when stdout fails; the caller exits (a handler may have left a
 * timer running, which would keep the process alive).
 */
export const serve = (answer: Answer): Promise<Served> =>
  new Promise<Served>((resolve) => {
    const stdout = process.stdout
    const stderr = process.stderr
    const writeReply = stdout.write.bind(stdout)
    const savedWrite = stdout.write
    const savedConsole = globalThis.console
    globalThis.console = new Console({ stdout: stderr, stderr })
    stdout.write = stderr.write.bind(stderr)

    const queue: Array<string> = []
    let busy = false
    let ended = false
    let done = false
    const finish = (served: Served) => {
      if (done) return
      done = true
      process.off("beforeExit", dry)
      process.stdin.pause()
      stdout.write = savedWrite
      globalThis.console = savedConsole
      resolve(served)
    }
    stdout.on("error", () => finish({ _tag: "StdoutClosed" }))
    // Node runs dry (nothing left that could settle anything) while a request is unanswered: its handler's promise
    // never settles. Said, rather than an exit 0 as if every reply were written.
    const dry = () =>
      finish(
        stop(
          `stdin closed while a handler never settled (a promise nothing is left to resolve): ${queue.length + 1} request${queue.length === 0 ? " was" : "s were"} not answered`
        )
      )
    process.once("beforeExit", dry)

    const send = (text: string): Promise<void> | undefined =>
      writeReply(text) ? undefined : new Promise((resolve) => stdout.once("drain", () => resolve()))

    // One request at a time, in order: a reply that is ready at once is written at once.
    const pump = async () => {
      busy = true
      try {
        for (let next = queue.shift(); next !== undefined && !done; next = queue.shift()) {
          const answered = answer(next)
          const reply = typeof answered === "string" || isStop(answered) ? answered : await answered
          if (typeof reply !== "string") return finish(reply)
          const drained = send(reply)
          if (drained !== undefined) await drained
        }
      } catch (error) {
        return finish(stop(`answering a request failed: ${describeThrown(error)}`))
      }
      busy = false
      if (ended) finish({ _tag: "Ended" })
    }

    readLines(
      process.stdin,
      (line) => {
        if (done) return
        queue.push(line)
        if (!busy) void pump()
      },
      () => {
        ended = true
        if (!busy) finish({ _tag: "Ended" })
      }
    )
  })

const isStop = (reply: Reply | PromiseLike<Reply>): reply is Stop =>
  typeof reply === "object" && reply !== null && "_tag" in reply && reply._tag === "Stop"
