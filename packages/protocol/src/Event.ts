// Submodule imports, not "effect": the SDK loads this file on its own when a request first reaches a handler, and
// the whole effect index would cost an extension ~15 MiB more (docs/extensions.md).
import * as Schema from "effect/Schema"

/** Every event the host sends, in the order docs/protocol.md lists them. */
export const EventNames = [
  "tool_call",
  "tool_result",
  "context",
  "before_agent_start",
  "before_compact",
  "list_tools",
  "invoke_tool",
  "session_start",
  "session_end"
] as const

export const EventName = Schema.Literals(EventNames)
export type EventName = typeof EventName.Type

export const isEventName = (u: unknown): u is EventName =>
  typeof u === "string" && (EventNames as ReadonlyArray<string>).includes(u)
