// Submodule imports, not "effect": the SDK loads this file on its own when a request fails RequestCheck.ts (to say
// why), and the whole effect index would cost an extension ~15 MiB more (docs/extensions.md).
import * as Schema from "effect/Schema"
import type { EventName } from "./Event.ts"

const Args = Schema.Record(Schema.String, Schema.Unknown)
/**
 * Every request the host writes carries `session_id` and `id` (docs/design.md#wire-protocol). `id` names one round of
 * one dispatch: every subscriber of the round gets the same one, the next round or dispatch a new one. A reply may echo
 * it; a reply that carries another id is never applied (the extension is dead, `unsolicited_output`). The host's ids
 * are strings and it always sends one (`WithId`); the schema lets a reader of requests (the SDK, a test) accept a
 * request without one, or with any JSON value, which it echoes unchanged.
 */
const base = { session_id: Schema.String, id: Schema.optionalKey(Schema.Unknown) }

/**
 * Requests, one schema per event (docs/design.md#wire-protocol). `round` is present on settling rounds after the first.
 */
export const ToolCallRequest = Schema.Struct({
  event: Schema.Literal("tool_call"),
  ...base,
  call_id: Schema.String,
  tool: Schema.String,
  args: Args,
  round: Schema.optionalKey(Schema.Int)
})
export type ToolCallRequest = typeof ToolCallRequest.Type

export const ToolResultRequest = Schema.Struct({
  event: Schema.Literal("tool_result"),
  ...base,
  call_id: Schema.String,
  tool: Schema.String,
  args: Args,
  content: Schema.String,
  is_error: Schema.Boolean,
  round: Schema.optionalKey(Schema.Int)
})
export type ToolResultRequest = typeof ToolResultRequest.Type

export const ContextRequest = Schema.Struct({
  event: Schema.Literal("context"),
  ...base,
  messages: Schema.Array(Schema.Unknown)
})
export type ContextRequest = typeof ContextRequest.Type

export const BeforeAgentStartRequest = Schema.Struct({
  event: Schema.Literal("before_agent_start"),
  ...base,
  system: Schema.String
})
export type BeforeAgentStartRequest = typeof BeforeAgentStartRequest.Type

export const BeforeCompactRequest = Schema.Struct({
  event: Schema.Literal("before_compact"),
  ...base,
  messages: Schema.Array(Schema.Unknown)
})
export type BeforeCompactRequest = typeof BeforeCompactRequest.Type

export const ListToolsRequest = Schema.Struct({ event: Schema.Literal("list_tools"), ...base })
export type ListToolsRequest = typeof ListToolsRequest.Type

export const InvokeToolRequest = Schema.Struct({
  event: Schema.Literal("invoke_tool"),
  ...base,
  call_id: Schema.String,
  tool: Schema.String,
  args: Args
})
export type InvokeToolRequest = typeof InvokeToolRequest.Type

export const SessionStartRequest = Schema.Struct({ event: Schema.Literal("session_start"), ...base })
export type SessionStartRequest = typeof SessionStartRequest.Type

export const SessionEndRequest = Schema.Struct({ event: Schema.Literal("session_end"), ...base })
export type SessionEndRequest = typeof SessionEndRequest.Type

export const Request = Schema.Union([
  ToolCallRequest,
  ToolResultRequest,
  ContextRequest,
  BeforeAgentStartRequest,
  BeforeCompactRequest,
  ListToolsRequest,
  InvokeToolRequest,
  SessionStartRequest,
  SessionEndRequest
])
export type Request = typeof Request.Type

/** The request type of one event. */
export type RequestOf<E extends EventName> = Extract<Request, { readonly event: E }>

/** A request as the host writes it: with its round's `id`. */
export type WithId<R> = R & { readonly id: string }

/** A request before the host gives it its round's `id`. */
export type RequestBody<E extends EventName> =
  RequestOf<E> extends infer R ? (R extends unknown ? Omit<R, "id"> : never) : never

export const RequestSchemas = {
  tool_call: ToolCallRequest,
  tool_result: ToolResultRequest,
  context: ContextRequest,
  before_agent_start: BeforeAgentStartRequest,
  before_compact: BeforeCompactRequest,
  list_tools: ListToolsRequest,
  invoke_tool: InvokeToolRequest,
  session_start: SessionStartRequest,
  session_end: SessionEndRequest
} as const
