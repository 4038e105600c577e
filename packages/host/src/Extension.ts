import type { DecodedReply, EventName, ExtensionConfig, RequestOf, WithId } from "@abhed/protocol"
import type { Effect } from "effect"
import type { DeathCause, ExtensionError } from "./ExtensionError.ts"

/**
 * One extension, live or fake: the unit the host fans out to (DESIGN §6).
 * Process-backed extensions (`ProcessExtension.ts`) and in-process fakes (`FakeExtension.ts`) both implement it.
 */

/** A request encoded once: process-backed extensions write `bytes`, fakes read `value`. */
export interface EncodedRequest<E extends EventName = EventName> {
  readonly event: E
  /** With the round's `id` (DESIGN §2), which replies are checked against. */
  readonly value: WithId<RequestOf<E>>
  /** `value` as one NDJSON line, newline included. The same bytes go to every subscriber. */
  readonly bytes: Uint8Array
}

export type ExtensionState =
  | { readonly _tag: "starting" }
  | { readonly _tag: "live" }
  | { readonly _tag: "dead"; readonly cause: DeathCause }

export interface ExtensionStatus {
  readonly name: string
  readonly state: ExtensionState
  /** Requests that got a valid reply. */
  readonly served: number
  /** The last 64 KiB of stderr (empty for fakes). */
  readonly stderr_tail: string
  readonly pid: number | undefined
}

export interface Extension {
  readonly name: string
  readonly config: ExtensionConfig
  /**
   * Send one request and wait for its reply. Serialized per extension (FIFO, one in flight). Any failure marks
   * the extension dead for good and terminates its process group; later calls fail with `ExtensionDead`
   * without writing anything.
   */
  readonly send: <E extends EventName>(request: EncodedRequest<E>) => Effect.Effect<DecodedReply<E>, ExtensionError>
  readonly status: Effect.Effect<ExtensionStatus>
}

/** Does this extension receive `event`? No events configured = all events. */
export const subscribes = (config: ExtensionConfig, event: EventName): boolean =>
  config.events.length === 0 || config.events.includes(event)
