// Per module, not the "effect" index, which would load all of effect into the extension.
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as Stream from "effect/Stream"
import type { PlatformError } from "effect/PlatformError"
import { Stdio } from "effect/Stdio"
import { Console as NodeConsole } from "node:console"
import type { Handlers } from "./Handler.ts"
import { failureOutcome, type LogLevel, type ReplyLine, responder } from "./Responder.ts"
import type { Reply } from "./Serve.ts"
import { UnreadableRequest } from "./UnreadableRequest.ts"

/**
 * The SDK inside an Effect program (`@abhed/extension/effect`): handlers whose Effects need services `R`, served
 * over the `Stdio` service. The same protocol handling as `Extension.main`; failures are logged with Effect's
 * logger (at Warning / Error), to stderr.
 */

export type { Handler, HandlerReply, Handlers } from "./Handler.ts"
export { UnreadableRequest } from "./UnreadableRequest.ts"

const responderIn = <R>(handlers: Handlers<R>) =>
  Effect.map(Effect.context<R>(), (context) => {
    const runExit = Effect.runPromiseExitWith(context)
    const logAt = (level: LogLevel, message: string) =>
      Effect.runFork(
        (level === "Error" ? Effect.logError(message) : Effect.logWarning(message)).pipe(Effect.provide(context))
      )
    return responder(handlers, {
      runEffect: (effect) =>
        runExit(effect).then((exit) =>
          Exit.isSuccess(exit) ? { _tag: "Success", value: exit.value } : failureOutcome(exit.cause, Cause.pretty)
        ),
      log: (level, message) => void logAt(level, message)
    })
  })

/**
 * The reply line (newline included) for one request line. An event without a handler, or one this SDK does not
 * know, gets `{}`; a line that is not a request the extension can read fails with `UnreadableRequest`
 * (docs/design.md#unreadable-requests).
 */
export const respond =
  <R>(handlers: Handlers<R>): ((line: string) => Effect.Effect<string, UnreadableRequest, R>) =>
  (line) =>
    Effect.flatMap(responderIn(handlers), (reply) => asEffect(reply(line)))

const fromReply = (reply: Reply): Effect.Effect<string, UnreadableRequest> =>
  typeof reply === "string" ? Effect.succeed(reply) : Effect.fail(new UnreadableRequest({ reason: reply.reason }))

/** A reply line now (no handler ran, or it answered synchronously) or later, as an Effect. */
const asEffect = (answer: ReplyLine): Effect.Effect<string, UnreadableRequest> =>
  answer instanceof Promise
    ? Effect.flatMap(
        Effect.promise(() => answer),
        fromReply
      )
    : fromReply(answer)

/** Node's console writing to stderr, so `Console.log` inside a handler cannot corrupt the reply stream. */
const stderrConsole = new NodeConsole({ stdout: process.stderr, stderr: process.stderr })

/**
 * The global `console` pointed at stderr while `run` serves: a `console.log` in a handler (or in a library it calls)
 * would otherwise write to stdout between two replies, and the host would mark the extension dead. Put back when
 * `run` ends. (`process.stdout.write` is left alone: the Stdio service may write the replies through it;
 * `Extension.main` redirects that too.)
 */
const consoleOnStderr = Effect.acquireRelease(
  Effect.sync(() => {
    const saved = globalThis.console
    globalThis.console = stderrConsole
    return saved
  }),
  (saved) => Effect.sync(() => void (globalThis.console = saved))
)

/**
 * Serve requests from stdin until it closes: exactly one reply line per request line, in order, and nothing
 * else on stdout (the Effect logger, `Console` and the global `console` go to stderr). Blank lines are not
 * requests and get no reply, as in the protocol's framing. Writes wait for stdout to drain. A request the extension
 * cannot read ends it with `UnreadableRequest`, and no reply (docs/design.md#unreadable-requests): let the program
 * exit non-zero so that the host applies the extension's `on_failure`.
 */
export const run = <R = never>(
  handlers: Handlers<R>
): Effect.Effect<void, PlatformError | UnreadableRequest, Stdio | R> =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* consoleOnStderr
      const stdio = yield* Stdio
      const reply = yield* responderIn(handlers)
      yield* stdio.stdin.pipe(
        Stream.decodeText(),
        Stream.splitLines,
        Stream.filter((line) => line.trim() !== ""),
        Stream.mapEffect((line) => asEffect(reply(line))),
        Stream.run(stdio.stdout())
      )
    })
  ).pipe(Effect.provideService(Logger.LogToStderr, true), Effect.provideService(Console.Console, stderrConsole))
