import {
  type DecodedReply,
  type EventName,
  eventsOf,
  type ExtensionConfig,
  type RequestOf,
  type WithId
} from "@abhed/protocol"
import type { Effect, Exit } from "effect"
import type { DeathCause, ExtensionError } from "./ExtensionError.ts"

/**
 * One extension, live or fake: the unit the host fans out to (docs/design.md#architecture).
 * Process-backed extensions (`ProcessExtension.ts`) and in-process fakes (`FakeExtension.ts`) both implement it.
 */

/** A request encoded once: process-backed extensions write `bytes`, fakes read `value`. */
export interface EncodedRequest<E extends EventName = EventName> {
  readonly event: E
  /** With the round's `id` (docs/design.md#wire-protocol), which replies are checked against. */
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
  /** No exchange in flight and nobody waiting for one: `beginNow` would begin now. */
  readonly idle?: () => boolean
  /**
   * `send` without a fiber, for the fan-out: when the permit is free and nobody waits for it, take it and begin the
   * exchange now, synchronously (the request is written before this returns); otherwise `undefined`, and the
   * caller uses `send`. The exchange keeps every guarantee of `send`: its permit is held until the reply, the
   * timeout or the death, whatever the caller does.
   */
  readonly beginNow?: <E extends EventName>(request: EncodedRequest<E>) => StartedExchange<E> | undefined
  readonly status: Effect.Effect<ExtensionStatus>
}

/** An exchange begun by `beginNow`. */
export interface StartedExchange<E extends EventName> {
  /** Calls `listener` once, when the exchange ends (at once if it has), unless `abandon` came first. */
  readonly onDone: (listener: (exit: Exit.Exit<DecodedReply<E>, ExtensionError>) => void) => void
  /** The caller no longer waits (it was interrupted): the exchange runs on and releases its permit when it ends. */
  readonly abandon: () => void
}

/** Does this extension receive `event`? No events configured = all events (an MCP server's: the two it answers). */
export const subscribes = (config: ExtensionConfig, event: EventName): boolean =>
  (config.events.length === 0 && config.protocol !== "mcp") || eventsOf(config).includes(event)
