import { type ExtensionConfig, Framing, type SessionEndRequest, type WithId } from "@abhed/protocol"
import { Effect } from "effect"
import { type EncodedRequest, subscribes } from "./Extension.ts"

/**
 * How an extension stops when its scope closes (docs/design.md#failures), run once as the scope's finalizer: a live
 * subscriber gets session_end first (unless the host sent it already, or an exchange is still out, whose reply
 * session_end would queue behind: an interrupted agent would wait for both), then a graceful close (stdin closed, a
 * grace, then terminate); a dead one is only terminated, joining the termination its death began in the background.
 */

export interface CloseSequence {
  readonly config: ExtensionConfig
  readonly sessionId: string
  /** session_end may go out: alive, nothing abandoned or orphaned, not sent already. */
  readonly mayEndSession: () => boolean
  readonly send: (request: EncodedRequest<"session_end">, timeoutMs: number) => Effect.Effect<unknown, unknown>
  /** From now on exits are expected and the sequence does the killing; says whether the extension is dead. */
  readonly closing: () => boolean
  /** Stops a dead extension, once (`Watchdog.terminator`). */
  readonly terminate: Effect.Effect<void>
  /** Stops a live one gracefully (`Transport.close`). */
  readonly close: Effect.Effect<void>
}

export const run = (options: CloseSequence): Effect.Effect<void> =>
  Effect.suspend(() => {
    const { config } = options
    const value: WithId<SessionEndRequest> = {
      event: "session_end",
      session_id: options.sessionId,
      id: `${config.name}-session-end`
    }
    // Bounded by timeout_ms even when it is the first exchange; a failure here just kills it.
    const endSession =
      options.mayEndSession() && subscribes(config, "session_end")
        ? Effect.ignore(
            options.send({ event: "session_end", value, bytes: Framing.encodeLine(value) }, config.timeout_ms)
          )
        : Effect.void
    return Effect.andThen(
      endSession,
      Effect.suspend(() => (options.closing() ? options.terminate : options.close))
    )
  })
