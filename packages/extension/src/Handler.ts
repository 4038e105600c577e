import type { EventName, ReplyOf, RequestOf } from "@abhed/protocol"
import type { Effect } from "effect"

/**
 * Handles one event: returns the reply as a plain value, a Promise of it, or an Effect producing it. A throw, a
 * rejection or a failing Effect is answered `{}` (no opinion), with the cause on stderr.
 */
export type Handler<E extends EventName, R = never> = (
  request: RequestOf<E>
) => ReplyOf<E> | PromiseLike<ReplyOf<E>> | Effect.Effect<ReplyOf<E>, unknown, R>

/** Handlers by event name. An event without a handler is answered with `{}`. */
export type Handlers<R = never> = { readonly [E in EventName]?: Handler<E, R> }
