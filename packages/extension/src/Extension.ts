import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import {
  decodeReply,
  type EventName,
  isEventName,
  isJsonObject,
  type ReplyOf,
  type RequestOf,
  RequestSchemas
} from "@abhed/protocol"
import { Cause, Console, Effect, Logger, Result, Schema, Stream } from "effect"
import type { PlatformError } from "effect/PlatformError"
import { Stdio } from "effect/Stdio"
import { Console as NodeConsole } from "node:console"

/**
 * The SDK for writing an Abhed extension in TypeScript with Effect (DESIGN §2).
 *
 * An extension is a process that reads one JSON request per line on stdin and writes exactly one JSON reply per
 * request on stdout, in order. `run` does the protocol; the author only writes handlers. Whatever goes wrong
 * with one request (a bad line, an unknown event, a failing handler, a reply of the wrong shape), the reply is
 * `{}` — no opinion — and the cause goes to stderr, so the host never marks the extension dead for it.
 */

/** Handles one event. Any failure or defect is logged to stderr and answered with `{}`. */
export type Handler<E extends EventName, R = never> = (request: RequestOf<E>) => Effect.Effect<ReplyOf<E>, unknown, R>

/** Handlers by event name. An event without a handler is answered with `{}`. */
export type Handlers<R = never> = { readonly [E in EventName]?: Handler<E, R> }

/** A reply that `JSON.stringify` cannot encode (a BigInt, a cycle) or encodes to nothing (a function). */
export class UnencodableReply extends Schema.TaggedError<UnencodableReply>()("UnencodableReply", {
  event: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.event}: reply cannot be encoded as JSON: ${this.detail}`
  }
}

const NoOpinion = "{}\n"

const encode = (event: EventName, reply: unknown): Result.Result<string, UnencodableReply> => {
  try {
    const text = JSON.stringify(reply)
    // JSON.stringify returns undefined for functions and symbols, despite its declared type.
    return typeof text === "string"
      ? Result.succeed(`${text}\n`)
      : Result.fail(new UnencodableReply({ event, detail: `got ${typeof reply}` }))
  } catch (error) {
    return Result.fail(new UnencodableReply({ event, detail: String(error) }))
  }
}

/**
 * Decode the request, run the handler, check the reply against the protocol, encode it. Never fails: every
 * failure is logged and becomes `{}`.
 */
const serve = <E extends EventName, R>(
  event: E,
  schema: Schema.Decoder<RequestOf<E>>,
  handler: Handler<E, R>,
  input: unknown
): Effect.Effect<string, never, R> =>
  Schema.decodeUnknownEffect(schema)(input).pipe(
    Effect.tapError((error) => Effect.logWarning(`${event}: request does not match the protocol: ${error.message}`)),
    // A handler that throws instead of returning an Effect is a defect, caught below like any other.
    Effect.flatMap((request) =>
      Effect.suspend(() => handler(request)).pipe(
        Effect.tapCause((cause) => Effect.logError(`${event}: handler failed`, Cause.pretty(cause)))
      )
    ),
    Effect.flatMap((reply) => checked(event, reply)),
    Effect.catchCause(() => Effect.succeed(NoOpinion))
  )

/**
 * The reply line for a handler's reply, or `{}` (logged) when it does not match the protocol or cannot be encoded.
 * Suspended: checking a value the types did not guard (a BigInt field) can throw, and that must be logged too.
 */
const checked = (event: EventName, reply: unknown): Effect.Effect<string> =>
  Effect.suspend(() =>
    Result.match(decodeReply(event, reply), {
      // Re-checking our own reply keeps a handler bug from getting the whole extension marked dead.
      onFailure: (error) =>
        Effect.logError(`${event}: handler returned a malformed reply (sent {} instead): ${error.message}`).pipe(
          Effect.as(NoOpinion)
        ),
      onSuccess: (decoded) =>
        Result.match(encode(event, decoded.reply), {
          onFailure: (error) => Effect.logError(`${error.message} (sent {} instead)`).pipe(Effect.as(NoOpinion)),
          onSuccess: Effect.succeed
        })
    })
  ).pipe(
    Effect.catchDefect((defect) =>
      Effect.logError(`${event}: handler returned a reply that cannot be checked (sent {} instead)`, defect).pipe(
        Effect.as(NoOpinion)
      )
    )
  )

type Servers<R> = { readonly [E in EventName]: (input: unknown) => Effect.Effect<string, never, R> }

const noOpinion = () => Effect.succeed(NoOpinion)

const server = <E extends EventName, R>(
  event: E,
  schema: Schema.Decoder<RequestOf<E>>,
  handler: Handler<E, R> | undefined
) =>
  handler === undefined
    ? noOpinion // not decoded at all: an event we do not handle costs nothing, however large its payload
    : (input: unknown) => serve(event, schema, handler, input)

const servers = <R>(handlers: Handlers<R>): Servers<R> => ({
  tool_call: server("tool_call", RequestSchemas.tool_call, handlers.tool_call),
  tool_result: server("tool_result", RequestSchemas.tool_result, handlers.tool_result),
  context: server("context", RequestSchemas.context, handlers.context),
  before_agent_start: server("before_agent_start", RequestSchemas.before_agent_start, handlers.before_agent_start),
  before_compact: server("before_compact", RequestSchemas.before_compact, handlers.before_compact),
  list_tools: server("list_tools", RequestSchemas.list_tools, handlers.list_tools),
  invoke_tool: server("invoke_tool", RequestSchemas.invoke_tool, handlers.invoke_tool),
  session_start: server("session_start", RequestSchemas.session_start, handlers.session_start),
  session_end: server("session_end", RequestSchemas.session_end, handlers.session_end)
})

const parseJson = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Unknown))

/**
 * The reply line (newline included) for one request line. Never fails: a line that is not JSON, not an object,
 * or names an unknown event gets `{}` like an event without a handler.
 */
export const respond = <R>(handlers: Handlers<R>): (line: string) => Effect.Effect<string, never, R> => {
  const byEvent = servers(handlers)
  return (line) => {
    const parsed = parseJson(line)
    if (Result.isFailure(parsed)) {
      return Effect.logWarning(`request is not JSON (sent {}): ${parsed.failure.message}`).pipe(Effect.as(NoOpinion))
    }
    const request = parsed.success
    if (!isJsonObject(request)) {
      return Effect.logWarning("request is not a JSON object (sent {})").pipe(Effect.as(NoOpinion))
    }
    const event = request["event"]
    if (!isEventName(event)) {
      // Newer hosts may send events this SDK does not know yet: no opinion is the right answer, not an error.
      return Effect.logDebug(`unknown event ${JSON.stringify(event)} (sent {})`).pipe(Effect.as(NoOpinion))
    }
    return byEvent[event](request)
  }
}

/** Node's console writing to stderr, so `Console.log` inside a handler cannot corrupt the reply stream. */
const stderrConsole = new NodeConsole({ stdout: process.stderr, stderr: process.stderr })

/**
 * Serve requests from stdin until it closes: exactly one reply line per request line, in order, and nothing
 * else on stdout (the Effect logger and `Console` go to stderr). Blank lines are not requests and get no reply,
 * as in the protocol's framing. Writes wait for stdout to drain.
 */
export const run = <R = never>(handlers: Handlers<R>): Effect.Effect<void, PlatformError, Stdio | R> =>
  Effect.gen(function*() {
    const stdio = yield* Stdio
    const reply = respond(handlers)
    yield* stdio.stdin.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.filter((line) => line.trim() !== ""),
      Stream.mapEffect(reply),
      Stream.run(stdio.stdout())
    )
  }).pipe(
    Effect.provideService(Logger.LogToStderr, true),
    Effect.provideService(Console.Console, stderrConsole)
  )

/**
 * Run an extension as the process's main program: `run` over the process's stdio with `NodeRuntime.runMain`.
 * Exits 0 when stdin closes, after every reply is written.
 */
export const main = (handlers: Handlers): void =>
  NodeRuntime.runMain(run(handlers).pipe(Effect.provide(NodeStdio.layer)))
