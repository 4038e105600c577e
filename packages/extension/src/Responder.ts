import type { EventName, JsonObject } from "@abhed/protocol"
import type { Effect } from "effect"
import { describe } from "./Describe.ts"
import type { Handler, Handlers } from "./Handler.ts"
import { mismatch, parseLine, withId } from "./RequestLine.ts"
import type { Reply } from "./Serve.ts"

/**
 * One request line in, one reply line out (docs/design.md#wire-protocol): the part of the SDK that `main` and the
 * Effect `run` share. It loads nothing from `effect` by itself: the protocol checks (Checks.ts) are imported the first
 * time a request reaches a handler, and an Effect a handler returns is run by the caller (`runEffect`), so an extension
 * of plain handlers or none pays for no more than it uses. Whatever goes wrong with one request it can read (an
 * unknown event: `{}`, no opinion; a failing handler, a reply of the wrong shape: `failed`, which the host counts
 * under the extension's `on_failure`), the cause goes to `log`: the host never marks the extension dead for it. A request it cannot read (not JSON, not an object, or a
 * handled event's fields not matching the protocol) gets no reply but a `Stop` (docs/design.md#unreadable-requests).
 */

/** How one Effect a handler returned ended: its value, or its cause, printed. */
export type EffectOutcome =
  | { readonly _tag: "Success"; readonly value: unknown }
  | { readonly _tag: "Failure"; readonly cause: string }

export type LogLevel = "Warning" | "Error"

export interface ResponderOptions<R> {
  /** Runs an Effect returned by a handler. Never rejects. */
  readonly runEffect: (effect: Effect.Effect<unknown, unknown, R>) => Promise<EffectOutcome>
  /** Where failures are reported: stderr, never stdout. */
  readonly log: (level: LogLevel, message: string) => void
}

/**
 * The reply to a line, newline included, or `Stop`: at once when no handler runs, else when the handler is done.
 */
export type ReplyLine = Reply | Promise<Reply>

const NoOpinion = "{}"

/**
 * The reply when this extension's own code failed on a request it could read (docs/extensions.md): `failed`, so the
 * host applies the extension's `on_failure` to this request alone. Fixed words: an error's message can quote what the
 * handler read (`JSON.parse`'s does), and the reply leaves the process; the error itself goes to stderr.
 */
const couldNotAnswer = (event: string, what: string): string =>
  JSON.stringify({ failed: `the ${event} handler ${what} (its error is on the extension's stderr)` })

/**
 * Effect values carry this key (effect's `Effect.TypeId`, "~effect/Effect"): checked by name so that telling an
 * Effect from a plain reply does not load effect. A test returns a real Effect from a handler.
 */
const EffectTypeId = "~effect/Effect"

const isEffect = <R>(u: unknown): u is Effect.Effect<unknown, unknown, R> =>
  (typeof u === "object" || typeof u === "function") && u !== null && EffectTypeId in u

const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  (typeof u === "object" || typeof u === "function") && u !== null && "then" in u && typeof u.then === "function"

/**
 * How an Effect ended with `cause`, printed by `print` (effect's `Cause.pretty`, which throws on a failure value
 * whose Proxy traps throw): never throws, so that `runEffect` never rejects.
 */
export const failureOutcome = <C>(cause: C, print: (cause: C) => string): EffectOutcome => {
  try {
    return { _tag: "Failure", cause: print(cause) }
  } catch (error) {
    return { _tag: "Failure", cause: `a failure that cannot be shown (printing it threw: ${describe(error)})` }
  }
}

/** The reply line with the request's `id` echoed. */
const line = (reply: string, id: unknown): string => `${withId(reply, id)}\n`

let checks: Promise<typeof import("./Checks.ts")> | undefined
const loadChecks = () => (checks ??= import("./Checks.ts"))

export const responder = <R>(handlers: Handlers<R>, options: ResponderOptions<R>): ((text: string) => ReplyLine) => {
  const { log } = options

  const serve = async <E extends EventName>(event: E, request: JsonObject, id: unknown): Promise<Reply> => {
    const { decodeRequest, encodeReply } = await loadChecks()
    const decoded = await decodeRequest(event, request)
    if (decoded._tag === "Failure") return mismatch(event, decoded.failure)
    let value: unknown
    try {
      const handler: Handler<E, R> | undefined = handlers[event]
      const result = handler === undefined ? {} : handler(decoded.success)
      if (isEffect<R>(result)) {
        const outcome = await options.runEffect(result)
        if (outcome._tag === "Failure") {
          log("Error", `${event}: handler failed (sent "failed"): ${outcome.cause}`)
          return line(couldNotAnswer(event, "failed"), id)
        }
        value = outcome.value
      } else {
        value = isPromiseLike(result) ? await result : result
      }
    } catch (error) {
      log("Error", `${event}: handler failed (sent "failed"): ${describe(error)}`)
      return line(couldNotAnswer(event, "failed"), id)
    }
    // Nothing (a plain JavaScript handler's bare `return` on the calls it lets through): no opinion, as `{}` is.
    if (value === undefined || value === null) return line(NoOpinion, id)
    const encoded = encodeReply(event, value)
    if (encoded._tag === "Failure") {
      log("Error", encoded.failure)
      return line(couldNotAnswer(event, "returned what is not a reply"), id)
    }
    return line(encoded.success, id)
  }

  const answer = (text: string): ReplyLine => {
    const parsed = parseLine(text)
    if (parsed._tag === "Stop") return parsed
    const { event, id, request } = parsed
    // Own keys only: an event named "toString" must not find Object.prototype's. An event without a handler,
    // or one this SDK does not know (newer hosts may send it), is answered at once, its payload never decoded.
    if (!Object.hasOwn(handlers, event)) return line(NoOpinion, id)
    return loadChecks()
      .then(({ isEventName }) => (isEventName(event) ? serve(event, request, id) : line(NoOpinion, id)))
      .catch((error: unknown) => lastResort(error, id))
  }

  // The last guard: whatever escaped the checks in `serve` (a `log` that throws, handlers that are a hostile
  // Proxy) still gets an answer, `failed`, rather than ending the extension, and the guard with it.
  const lastResort = (error: unknown, id: unknown): string => {
    try {
      log("Error", `request failed (sent "failed"): ${describe(error)}`)
    } catch {
      // Nowhere left to report it; the reply still goes out.
    }
    return line(JSON.stringify({ failed: "the request failed in the extension (its error is on its stderr)" }), id)
  }

  return (text) => {
    try {
      return answer(text)
    } catch (error) {
      return lastResort(error, undefined)
    }
  }
}
