// Submodule imports, not "effect": the SDK loads this file on its own when a request first reaches a handler, and
// the whole effect index would cost an extension ~15 MiB more (docs/extensions.md).
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { EventName } from "./Event.ts"
import { isJsonObject, jsonProblem, jsonProblemButNumbers, type JsonProblem, MaxJsonDepth, shapeJson } from "./Json.ts"
import { ToolDeclaration } from "./Tool.ts"

/**
 * Replies, one Schema per event (docs/design.md#wire-protocol), the one statement of each shape: the types below are
 * theirs. Every field is optional: `{}` is "no opinion". There is no `allow` anywhere: a reply cannot express a permit.
 * `decodeReply` checks them by hand (see `ReplyFields`), and a property test holds the two to the same verdicts.
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
export const ListToolsReply = Struct({ tools: Schema.optionalKey(Schema.Array(ToolDeclaration.check(jsonObject))) })
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
    return this.path === ""
      ? `reply: expected ${this.expected}, got ${this.got}`
      : `${this.path}: expected ${this.expected}, got ${this.got}`
  }
}

/** The `id` a reply carries, if any (`null` counts as absent, as for every reply field; own keys only). */
export const replyIdOf = (json: unknown): unknown =>
  isJsonObject(json) && Object.hasOwn(json, "id") ? (json["id"] ?? undefined) : undefined

/** A decoded reply plus the known fields that belong to other events (ignored, but audited). */
export interface DecodedReply<E extends EventName> {
  readonly reply: ReplyOf<E>
  readonly ignored: ReadonlyArray<string>
}

interface Field {
  readonly expected: string
  readonly check: (u: unknown) => string | undefined // undefined = ok, else the sub-path that failed ("" = the field itself)
}

const is = <S extends Schema.Top>(schema: S) => {
  const guard = Schema.is(schema)
  return (u: unknown): string | undefined => (guard(u) ? undefined : "")
}
const bool: Field = { expected: "boolean", check: is(Schema.Boolean) }
const str: Field = { expected: "string", check: is(Schema.String) }
const obj: Field = { expected: "object", check: (u) => (isJsonObject(u) ? undefined : "") }
const anyJson: Field = { expected: "any JSON value", check: () => undefined }
// Any array: an element that names no message (2.5, -1, 9 of 2, "1") is the combiner's to ignore and note, so one
// bad index cannot kill a filter and turn its drops into "keep everything" (docs/design.md#combination).
const indices: Field = {
  expected: "array of message indices",
  check: (u) => (Array.isArray(u) ? undefined : "")
}
const toolFields = {
  // Any string: a name that is not a valid tool name rejects that one declaration, not the whole reply
  // (docs/design.md#combination).
  name: str,
  description: str,
  input_schema: obj
} as const
const tools: Field = {
  expected: "array of {name, description, input_schema}",
  check: (u) => {
    if (!Array.isArray(u)) return ""
    for (let i = 0; i < u.length; i++) {
      const t: unknown = u[i]
      if (!isJsonObject(t)) return `[${i}]`
      for (const [k, f] of Object.entries(toolFields)) {
        if (f.check(t[k]) !== undefined) return `[${i}].${k}`
      }
    }
    return undefined
  }
}

/**
 * The fields that count, per event (docs/design.md#wire-protocol): the hand checks of the reply Schemas above, kept
 * as the fast path. A Schema decode alone costs more than this whole decode (which also walks the reply for depth,
 * BigInt and Infinity, drops nulls and lists ignored fields): best of 5 x 1M on a shared 2-core machine
 * (`node packages/protocol/scripts/bench-reply.ts`), hand vs Schema: `{}` 45 vs 520 ns,
 * `{"block":true,"reason":"x","id":"1"}` 280 vs 567 ns, `{"content":…,"id":"2"}` 177 vs 197 ns. ReplySchema.test.ts
 * holds the two to the same verdicts and the same decoded replies.
 */
export const ReplyFields: { readonly [E in EventName]: { readonly [K in keyof ReplyByEvent[E]]-?: Field } } = {
  tool_call: { block: bool, ask: bool, reason: str, args: obj },
  tool_result: { content: str, is_error: bool },
  context: { keep: indices },
  before_agent_start: { system: str },
  before_compact: { cancel: bool, summary: str },
  list_tools: { tools },
  invoke_tool: { result: anyJson, is_error: bool },
  session_start: {},
  session_end: {}
}

/** Every field that counts for some event. A known field in the wrong event's reply is ignored and noted. */
export const KnownReplyFields: ReadonlySet<string> = new Set(
  Object.values(ReplyFields).flatMap((fields) => Object.keys(fields))
)

const nestedField = (path: string, sub: string, field: Field): { expected: string } => {
  if (sub === "") return field
  if (sub.endsWith(".name")) return toolFields.name
  if (sub.endsWith(".description")) return toolFields.description
  if (sub.endsWith(".input_schema")) return toolFields.input_schema
  return { expected: "object" }
}

const at = (u: unknown, sub: string): unknown => {
  // Walk "[1].name" style sub-paths, to describe the offending value.
  let cur: unknown = u
  for (const m of sub.matchAll(/\[(\d+)\]|\.([A-Za-z_]+)/g)) {
    if (m[1] !== undefined && Array.isArray(cur)) cur = cur[Number(m[1])]
    else if (m[2] !== undefined && isJsonObject(cur)) cur = cur[m[2]]
  }
  return cur
}

/**
 * What was found where a field was due, by its shape only: its type, a string's length, a container's shapes
 * inside it, keys by their length but for the protocol's own field names (`string (31 chars)`,
 * `array ["<31 chars>"]`), never a string's, a number's or a key's value. A reply in the wrong shape can hold
 * exactly what its extension was there to hide (a redactor's `content` as an array of the lines it kept, or as a map
 * from the secrets it found to their replacements), and this text becomes the death cause, which reaches the audit
 * (whatever its content mode), the log and the notes the model reads. A boolean, `null` and nothing are shown as they
 * are: they carry no content.
 */
export const shapeOf = (u: unknown): string =>
  u === undefined
    ? "nothing"
    : u === null || typeof u === "boolean"
      ? String(u)
      : typeof u === "string"
        ? `string (${u.length} chars)`
        : typeof u === "number" || typeof u === "bigint"
          ? "number"
          : Array.isArray(u)
            ? `array ${shapeJson(u, 80)}`
            : typeof u === "object"
              ? `object ${shapeJson(u, 80)}`
              : typeof u

/**
 * The first thing in a reply the host cannot pass on as JSON, and the top-level field it is in. An index in `keep`
 * that is not a finite number is one more index that is not an integer, ignored like `2.5` (ContextKeep): the
 * filter keeps fewer messages, never more, so it is not worth the filter's life.
 */
const firstProblem = (input: unknown): { readonly path: string; readonly problem: JsonProblem } | undefined => {
  if (!isJsonObject(input)) {
    const problem = jsonProblem(input, MaxJsonDepth)
    return problem === undefined ? undefined : { path: "", problem }
  }
  for (const key of Object.keys(input)) {
    // Where a non-finite number is harmless or a smaller matter than the reply: an ignored `keep` index, and a tool
    // declaration, which the registry rejects alone (its input_schema cannot be shown to the model).
    const numbersOk = key === "keep" || key === "tools"
    const problem = numbersOk
      ? jsonProblemButNumbers(input[key], MaxJsonDepth - 1)
      : jsonProblem(input[key], MaxJsonDepth - 1)
    if (problem !== undefined) return { path: key, problem }
  }
  return undefined
}

/**
 * Decode one reply for `event`. Unknown fields are ignored; `null` counts as absent (what `jq` writes for a
 * missing value). Known fields of other events are ignored and listed in `ignored`.
 */
export const decodeReply = <E extends EventName>(
  event: E,
  input: unknown
): Result.Result<DecodedReply<E>, MalformedReply> => {
  // First, so that nothing below (previews, and later the host's comparisons and encoding) walks a deep value or
  // meets a BigInt (which only an in-process extension can hand over, and which JSON.stringify throws on), or a
  // number JSON cannot carry (`1e999` parses as Infinity, which the next round's request and the audit would write as
  // null: the extensions would judge null while the tool ran with Infinity). One walk, key by key, for the path.
  const found = firstProblem(input)
  if (found !== undefined) {
    const { path, problem } = found
    return Result.fail(
      problem === "deep"
        ? new MalformedReply({
            event,
            path,
            expected: `JSON nested at most ${MaxJsonDepth} levels deep`,
            got: "deeper"
          })
        : problem === "bigint"
          ? new MalformedReply({ event, path, expected: "JSON (a BigInt is not)", got: "a BigInt" })
          : new MalformedReply({
              event,
              path,
              expected: "numbers JSON can carry (1e999 reads as Infinity)",
              got: "a number out of range"
            })
    )
  }
  if (!isJsonObject(input)) {
    return Result.fail(new MalformedReply({ event, path: "", expected: "a JSON object", got: shapeOf(input) }))
  }
  const fields: Record<string, Field> = ReplyFields[event]
  const reply: Record<string, unknown> = {}
  const ignored: Array<string> = []
  for (const key of Object.keys(input)) {
    const value = input[key]
    // Own keys only: a reply key like "toString" or "__proto__" must not find Object.prototype's members.
    const field = Object.hasOwn(fields, key) ? fields[key] : undefined
    if (field === undefined) {
      if (KnownReplyFields.has(key)) ignored.push(key)
      continue
    }
    if (value === null) continue
    const sub = field.check(value)
    if (sub !== undefined) {
      return Result.fail(
        new MalformedReply({
          event,
          path: `${key}${sub}`,
          expected: nestedField(key, sub, field).expected,
          got: shapeOf(at(value, sub))
        })
      )
    }
    reply[key] = value
  }
  ignored.sort()
  // The checks above establish exactly the shape ReplyOf<E> describes.
  return Result.succeed({ reply: reply as ReplyOf<E>, ignored })
}
