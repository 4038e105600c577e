import { Console } from "node:console"
import { describe } from "./Describe.ts"
import type { Handlers } from "./Handler.ts"
import { type EffectOutcome, failureOutcome, type LogLevel, type ReplyLine, responder } from "./Responder.ts"

/**
 * The SDK for writing an Abhed extension in TypeScript (docs/design.md#wire-protocol), with or without Effect.
 *
 * An extension is a process that reads one JSON request per line on stdin and writes exactly one JSON reply per
 * request on stdout, in order. `main` does the protocol; the author only writes handlers, each returning its
 * reply as a plain value, a Promise or an Effect. This module loads nothing from `effect`: the protocol checks
 * are loaded when a request first reaches a handler, the Effect runtime when a handler first returns an Effect
 * (an extension that never does pays nothing for it). For an Effect program that provides its own services, see
 * `@abhed/extension/effect`.
 */

export type { Handler, Handlers } from "./Handler.ts"
export type { LogLevel } from "./Responder.ts"

/** Reports to stderr, one line per failure. */
const logToStderr = (level: LogLevel, message: string): void => {
  process.stderr.write(`abhed-extension ${level === "Error" ? "error" : "warning"}: ${message}\n`)
}

/** Runs an Effect a handler returned with effect's default runtime, loaded on first use. */
const runEffect = async (effect: import("effect").Effect.Effect<unknown, unknown>): Promise<EffectOutcome> => {
  const [{ runPromiseExit }, { pretty }] = await Promise.all([import("effect/Effect"), import("effect/Cause")])
  const exit = await runPromiseExit(effect)
  return exit._tag === "Success" ? { _tag: "Success", value: exit.value } : failureOutcome(exit.cause, pretty)
}

/**
 * The reply lines for `handlers`, one per request line, for tests: `respond(handlers)(line)` is exactly what
 * `main` writes for `line`. Failures are reported to `log` (default: stderr, as `main` does).
 */
export const respond = (
  handlers: Handlers,
  log: (level: LogLevel, message: string) => void = logToStderr
): ((line: string) => Promise<string>) => {
  const reply = responder(handlers, { runEffect, log })
  return async (line) => reply(line)
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
 * Run an extension as the process's main program: serve requests from stdin until it closes, exactly one reply
 * line per request line, in order, and nothing else on stdout. From the call on, `console` and
 * `process.stdout.write` go to stderr (a `console.log` in a handler cannot corrupt the replies), and so do the
 * SDK's own reports and Effect's logger. Exits 0 once stdin has closed and every reply is written, even if a
 * handler left a timer running; and quietly when the host stops reading (EPIPE).
 */
export const main = (handlers: Handlers): void => {
  const stdout = process.stdout
  const writeReply = stdout.write.bind(stdout)
  const stderr = process.stderr
  globalThis.console = new Console({ stdout: stderr, stderr })
  stdout.write = stderr.write.bind(stderr)
  stdout.on("error", () => process.exit(0))
  // A promise a handler started and did not wait for (a metrics call, an audit write) that rejects later would end
  // the process (Node's default), and the guard with it: its reply went out, so the rejection is only logged.
  process.on("unhandledRejection", (reason) => {
    try {
      logToStderr("Error", `a promise nobody awaited rejected (the extension goes on): ${describe(reason)}`)
    } catch {
      // Nowhere left to report it.
    }
  })

  const reply = responder(handlers, { runEffect, log: logToStderr })
  const queue: Array<string> = []
  let busy = false
  let ended = false

  const send = (text: string): Promise<void> | undefined =>
    writeReply(text) ? undefined : new Promise((resolve) => stdout.once("drain", () => resolve()))

  // One request at a time, in order: a reply that is ready at once is written at once.
  const pump = async () => {
    busy = true
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const answer: ReplyLine = reply(next)
      const drained = send(typeof answer === "string" ? answer : await answer)
      if (drained !== undefined) await drained
    }
    busy = false
    if (ended) process.exit(0)
  }

  readLines(
    process.stdin,
    (line) => {
      queue.push(line)
      if (!busy) void pump()
    },
    () => {
      ended = true
      if (!busy) process.exit(0)
    }
  )
}
