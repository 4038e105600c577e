import type { EventName, ReplyOf, RequestOf } from "@abhed/protocol"
import type { Effect } from "effect"

/**
 * What a handler may return for event `E`: its reply, or `{ failed: "why" }` when its own code could not judge this
 * request (sent as that alone: the host applies the extension's `on_failure` to this request, docs/protocol.md). The
 * why is shown to the operator, and to the model under `on_failure` `"deny"`: never put what you read in it.
 */
export type HandlerReply<E extends EventName> = ReplyOf<E> & { readonly failed?: string }

/**
 * Handles one event: returns the reply as a plain value, a Promise of it, or an Effect producing it. A throw, a
 * rejection or a failing Effect is answered `failed` (the host applies the extension's `on_failure`), with the cause
 * on stderr.
 */
export type Handler<E extends EventName, R = never> = (
  request: RequestOf<E>
) => HandlerReply<E> | PromiseLike<HandlerReply<E>> | Effect.Effect<HandlerReply<E>, unknown, R>

/** Handlers by event name. An event without a handler is answered with `{}`. */
export type Handlers<R = never> = { readonly [E in EventName]?: Handler<E, R> }
