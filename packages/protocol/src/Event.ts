// No effect import: the SDK reads an event's name before it checks anything, and an extension of plain handlers
// loads nothing from effect (the config's Schema states the same names, ConfigSchema.ts).

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

export type EventName = (typeof EventNames)[number]

export const isEventName = (u: unknown): u is EventName =>
  typeof u === "string" && (EventNames as ReadonlyArray<string>).includes(u)
