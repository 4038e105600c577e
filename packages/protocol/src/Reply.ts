// Submodule imports, not "effect": a program that checks replies needs Schema, not the whole effect index. (The SDK
// checks replies with ReplyCheck.ts alone, which loads nothing from effect.)
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { EventName } from "./Event.ts"
import { isJsonObject } from "./Json.ts"
import { checkReply, type Field, ReplyFieldChecks, replyProblemText } from "./ReplyCheck.ts"
import { ToolDeclaration } from "./Tool.ts"

export { FailedField, FailedTextMax, KnownReplyFields, shapeOf } from "./ReplyCheck.ts"

/**
 * Replies, one Schema per event (docs/design.md#wire-protocol), the one statement of each shape: the types below are
 * theirs. Every field is optional: `{}` is "no opinion". There is no `allow` anywhere: a reply cannot express a permit.
 * `decodeReply` checks them by hand (ReplyCheck.ts), and a property test holds the two to the same verdicts.
 */
// A reply, and an object in it, is a JSON object: effect's Struct and Record take an array too (to JavaScript an array
// is an object), and a Struct without fields takes any value.
const jsonObject = Schema.makeFilter<unknown>((u) => isJsonObject(u) || "expected a JSON object")
const Struct = <F extends Schema.Struct.Fields>(fields: F) => Schema.Struct(fields).check(jsonObject)
const Object_ = Schema.Record(Schema.String, Schema.Unknown).check(jsonObject)

export const ToolCallReply = Struct({
  block: Schema.optionalKey(Schema.Boolean),
  ask: Schema.optionalKey(Schema.Boolean),
  reason: Schema.optionalKey(Schema.String),
  args: Schema.optionalKey(Object_)
})
export type ToolCallReply = typeof ToolCallReply.Type
export const ToolResultReply = Struct({
  content: Schema.optionalKey(Schema.String),
  is_error: Schema.optionalKey(Schema.Boolean)
})
export type ToolResultReply = typeof ToolResultReply.Type
export const ContextReply = Struct({
  /**
   * Indices into the request's `messages` (integers). An element that names no message (not an integer, negative,
   * too large, not a number at all) is ignored by the host and noted in the audit: it cannot keep anything else,
   * and the rest of the list still counts.
   */
  keep: Schema.optionalKey(Schema.Array(Schema.Unknown))
})
export type ContextReply = typeof ContextReply.Type
export const BeforeAgentStartReply = Struct({ system: Schema.optionalKey(Schema.String) })
export type BeforeAgentStartReply = typeof BeforeAgentStartReply.Type
export const BeforeCompactReply = Struct({
  cancel: Schema.optionalKey(Schema.Boolean),
  summary: Schema.optionalKey(Schema.String)
})
export type BeforeCompactReply = typeof BeforeCompactReply.Type
export const ListToolsReply = Struct({
  tools: Schema.optionalKey(Schema.Array(ToolDeclaration.check(jsonObject))),
  /** What the operator should know of the tools declared (one renamed, one left out): logged at startup, noted. */
  warnings: Schema.optionalKey(Schema.Array(Schema.String))
})
export type ListToolsReply = typeof ListToolsReply.Type
export const InvokeToolReply = Struct({
  result: Schema.optionalKey(Schema.Unknown),
  is_error: Schema.optionalKey(Schema.Boolean)
})
export type InvokeToolReply = typeof InvokeToolReply.Type
export const SessionReply = Struct({})
export type SessionReply = typeof SessionReply.Type

/** The reply Schema of each event. */
export const ReplySchemas = {
  tool_call: ToolCallReply,
  tool_result: ToolResultReply,
  context: ContextReply,
  before_agent_start: BeforeAgentStartReply,
  before_compact: BeforeCompactReply,
  list_tools: ListToolsReply,
  invoke_tool: InvokeToolReply,
  session_start: SessionReply,
  session_end: SessionReply
} as const satisfies { readonly [E in EventName]: Schema.Top }

export type ReplyByEvent = { readonly [E in EventName]: (typeof ReplySchemas)[E]["Type"] }
export type ReplyOf<E extends EventName> = ReplyByEvent[E]
export type Reply = ReplyByEvent[EventName]

/** A reply that is not a JSON object, or whose fields for this event have the wrong type. */
export class MalformedReply extends Schema.TaggedError<MalformedReply>()("MalformedReply", {
  event: Schema.String,
  /** The offending field (`block`, `tools[1].name`), or "" when the reply as a whole is wrong. */
  path: Schema.String,
  expected: Schema.String,
  got: Schema.String
}) {
  override get message(): string {
    return replyProblemText(this)
  }
}

/** The `id` a reply carries, if any (`null` counts as absent, as for every reply field; own keys only). */
export const replyIdOf = (json: unknown): unknown =>
  isJsonObject(json) && Object.hasOwn(json, "id") ? (json["id"] ?? undefined) : undefined

/** A decoded reply plus the known fields that belong to other events (ignored, but audited). */
export interface DecodedReply<E extends EventName> {
  readonly reply: ReplyOf<E>
  readonly ignored: ReadonlyArray<string>
  /**
   * The reply's `failed` (any event): the extension could not answer, and says why; `reply` is then `{}` and counts
   * for nothing: the host applies the extension's `on_failure` to this request alone.
   */
  readonly failed?: string | undefined
}

/**
 * The fields that count, per event (docs/design.md#wire-protocol): the hand checks of the reply Schemas above, kept
 * as the fast path (ReplyCheck.ts says why, with the numbers). ReplySchema.test.ts holds the two to the same verdicts
 * and the same decoded replies.
 */
export const ReplyFields: { readonly [E in EventName]: { readonly [K in keyof ReplyByEvent[E]]-?: Field } } =
  ReplyFieldChecks

/**
 * Decode one reply for `event`. Unknown fields are ignored; `null` counts as absent (what `jq` writes for a
 * missing value). Known fields of other events are ignored and listed in `ignored`.
 */
export const decodeReply = <E extends EventName>(
  event: E,
  input: unknown
): Result.Result<DecodedReply<E>, MalformedReply> => {
  const checked = checkReply(event, input)
  return checked._tag === "Failure"
    ? Result.fail(new MalformedReply({ event, ...checked.problem }))
    : // The checks establish exactly the shape ReplyOf<E> describes.
      Result.succeed(
        checked.failed === undefined
          ? { reply: checked.reply as ReplyOf<E>, ignored: checked.ignored }
          : { reply: checked.reply as ReplyOf<E>, ignored: checked.ignored, failed: checked.failed }
      )
}
