import { describe } from "./Describe.ts"
import type { Handlers } from "./Handler.ts"
import { type EffectOutcome, failureOutcome, type LogLevel, responder } from "./Responder.ts"
import { serve } from "./Serve.ts"

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

export type { Handler, HandlerReply, Handlers } from "./Handler.ts"
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
 * `main` writes for `line`. Failures are reported to `log` (default: stderr, as `main` does). A line `main` would stop
 * at (a request it cannot read, docs/design.md#unreadable-requests) rejects with an `UnreadableRequest`.
 */
export const respond = (
  handlers: Handlers,
  log: (level: LogLevel, message: string) => void = logToStderr
): ((line: string) => Promise<string>) => {
  const reply = responder(handlers, { runEffect, log })
  return async (line) => {
    const answered = await reply(line)
    if (typeof answered === "string") return answered
    const { UnreadableRequest } = await import("./UnreadableRequest.ts")
    throw new UnreadableRequest({ reason: answered.reason })
  }
}

/**
 * Run an extension as the process's main program: serve requests from stdin until it closes, exactly one reply
 * line per request line, in order, and nothing else on stdout (Serve.ts). From the call on, `console` and
 * `process.stdout.write` go to stderr (a `console.log` in a handler cannot corrupt the replies), and so do the
 * SDK's own reports and Effect's logger. Exits 0 once stdin has closed and every reply is written, even if a
 * handler left a timer running; and quietly when the host stops reading (EPIPE). Stdin closed while a handler's
 * promise never settled: the requests left unanswered are said on stderr, exit 1. A request it cannot read
 * (docs/design.md#unreadable-requests) gets no reply: the reason goes to stderr and the process exits 1, so that the
 * host applies the extension's `on_failure`.
 */
export const main = (handlers: Handlers): void => {
  // A promise a handler started and did not wait for (a metrics call, an audit write) that rejects later would end
  // the process (Node's default), and the guard with it: its reply went out, so the rejection is only logged.
  process.on("unhandledRejection", (reason) => {
    try {
      logToStderr("Error", `a promise nobody awaited rejected (the extension goes on): ${describe(reason)}`)
    } catch {
      // Nowhere left to report it.
    }
  })

  void serve(responder(handlers, { runEffect, log: logToStderr })).then((served) => {
    if (served._tag !== "Stop") process.exit(0)
    logToStderr("Error", served.reason)
    process.exit(1)
  })
}
