// No effect import: the SDK checks every reply a handler returns with this module alone, so an extension of plain
// handlers loads nothing from effect. Reply.ts wraps it in the protocol's Result and MalformedReply.
import type { EventName } from "./Event.ts"
import { isJsonObject, jsonProblem, jsonProblemButNumbers, type JsonProblem, MaxJsonDepth, shapeJson } from "./Json.ts"

/**
 * The hand checks of the reply Schemas (Reply.ts), kept as the fast path. A Schema decode alone costs more than this
 * whole decode (which also walks the reply for depth, BigInt and Infinity, drops nulls and lists ignored fields): best
 * of 5 x 1M on a shared 2-core machine (`node packages/protocol/scripts/bench-reply.ts`), hand vs Schema: `{}` 45 vs
 * 520 ns, `{"block":true,"reason":"x","id":"1"}` 280 vs 567 ns, `{"content":…,"id":"2"}` 177 vs 197 ns; and loading
 * effect's Schema costs an extension process about 0.3 s of CPU at its first request. ReplySchema.test.ts holds the
 * two to the same verdicts and the same decoded replies.
 */

export interface Field {
  readonly expected: string
  readonly check: (u: unknown) => string | undefined // undefined = ok, else the sub-path that failed ("" = the field itself)
}

const bool: Field = { expected: "boolean", check: (u) => (typeof u === "boolean" ? undefined : "") }
const str: Field = { expected: "string", check: (u) => (typeof u === "string" ? undefined : "") }
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

const strings: Field = {
  expected: "array of strings",
  check: (u) => {
    if (!Array.isArray(u)) return ""
    for (let i = 0; i < u.length; i++) if (typeof u[i] !== "string") return `[${i}]`
    return undefined
  }
}

/** The fields that count, per event (docs/design.md#wire-protocol). Reply.ts types them against the reply Schemas. */
export const ReplyFieldChecks = {
  tool_call: { block: bool, ask: bool, reason: str, args: obj },
  tool_result: { content: str, is_error: bool },
  context: { keep: indices },
  before_agent_start: { system: str },
  before_compact: { cancel: bool, summary: str },
  list_tools: { tools, warnings: strings },
  invoke_tool: { result: anyJson, is_error: bool },
  session_start: {},
  session_end: {}
} as const satisfies { readonly [E in EventName]: { readonly [key: string]: Field } }

/**
 * The field any event's reply may carry instead of an answer: the extension could not answer this request (its own
 * code failed on it), and says why. The host applies the extension's `on_failure` to this request alone, and the
 * extension stays alive (docs/protocol.md, "When you cannot answer").
 */
export const FailedField = "failed"

/** The most of a `failed` reply's text the host repeats (in the on_failure reason and its log line). */
export const FailedTextMax = 200

/**
 * Every field that counts for some event (`failed`, which counts for every event, apart). A known field in the wrong
 * event's reply is ignored and noted.
 */
export const KnownReplyFields: ReadonlySet<string> = new Set(
  Object.values(ReplyFieldChecks).flatMap((fields) => Object.keys(fields))
)

const nestedField = (path: string, sub: string, field: Field): { expected: string } => {
  if (sub === "") return field
  if (sub.endsWith(".name")) return toolFields.name
  if (sub.endsWith(".description")) return toolFields.description
  if (sub.endsWith(".input_schema")) return toolFields.input_schema
  // An element of a list of strings (`warnings`), else of a list of objects (`tools`).
  return field === strings ? str : { expected: "object" }
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

/** A reply checked: its fields that count (nulls dropped) and the ignored known fields, or what is wrong with it. */
export type CheckedReply =
  | {
      readonly _tag: "Success"
      readonly reply: { readonly [key: string]: unknown }
      readonly ignored: ReadonlyArray<string>
      /** The reply's `failed`: why the extension could not answer (its other fields are then ignored). */
      readonly failed?: string
    }
  | { readonly _tag: "Failure"; readonly problem: ReplyProblem }

/** What is wrong with a reply: the offending field (`block`, `tools[1].name`; "" for the reply as a whole). */
export interface ReplyProblem {
  readonly path: string
  readonly expected: string
  readonly got: string
}

/** A reply problem in words, as `MalformedReply`'s message says it. */
export const replyProblemText = ({ path, expected, got }: ReplyProblem): string =>
  path === "" ? `reply: expected ${expected}, got ${got}` : `${path}: expected ${expected}, got ${got}`

const failed = (path: string, expected: string, got: string): CheckedReply => ({
  _tag: "Failure",
  problem: { path, expected, got }
})

/**
 * A JSON-RPC error, the answer of a JSON-RPC peer (an MCP server configured without `"protocol": "mcp"`) to a request
 * it cannot read: its unknown fields would make it a valid reply, no opinion, and the server's tools would be missing
 * with nothing said. No extension answers so.
 */
const isJsonRpcError = (input: { readonly [key: string]: unknown }): boolean => {
  if (!Object.hasOwn(input, "jsonrpc")) return false
  const error = input["error"]
  return isJsonObject(error) && typeof error["code"] === "number"
}

const JsonRpcErrorGot =
  'a JSON-RPC error (an MCP server? give its config entry "protocol": "mcp", or run it through abhed-ext mcp)'

/**
 * Check one reply for `event` (Reply.ts's `decodeReply` states the rules). Unknown fields are ignored; `null` counts
 * as absent. Known fields of other events are ignored and listed in `ignored`.
 */
export const checkReply = (event: EventName, input: unknown): CheckedReply => {
  // First, so that nothing below (previews, and later the host's comparisons and encoding) walks a deep value or
  // meets a BigInt (which only an in-process extension can hand over, and which JSON.stringify throws on), or a
  // number JSON cannot carry (`1e999` parses as Infinity, which the next round's request and the audit would write as
  // null: the extensions would judge null while the tool ran with Infinity). One walk, key by key, for the path.
  const found = firstProblem(input)
  if (found !== undefined) {
    const { path, problem } = found
    return problem === "deep"
      ? failed(path, `JSON nested at most ${MaxJsonDepth} levels deep`, "deeper")
      : problem === "bigint"
        ? failed(path, "JSON (a BigInt is not)", "a BigInt")
        : failed(path, "numbers JSON can carry (1e999 reads as Infinity)", "a number out of range")
  }
  if (!isJsonObject(input)) return failed("", "a JSON object", shapeOf(input))
  if (isJsonRpcError(input)) return failed("", "an extension's reply", JsonRpcErrorGot)
  const failure = Object.hasOwn(input, FailedField) ? input[FailedField] : null
  if (failure !== null) return failedReply(input, failure)
  const fields: { readonly [key: string]: Field } = ReplyFieldChecks[event]
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
    if (sub !== undefined) return failed(`${key}${sub}`, nestedField(key, sub, field).expected, shapeOf(at(value, sub)))
    reply[key] = value
  }
  ignored.sort()
  return { _tag: "Success", reply, ignored }
}

/** A reply that says the extension could not answer: its text, and every other known field it gives, ignored. */
const failedReply = (input: { readonly [key: string]: unknown }, failure: unknown): CheckedReply => {
  if (typeof failure !== "string")
    return failed(FailedField, "a string (why the extension could not answer)", shapeOf(failure))
  const ignored = Object.keys(input).filter(
    (key) => key !== FailedField && KnownReplyFields.has(key) && input[key] !== null
  )
  return { _tag: "Success", reply: {}, ignored: ignored.sort(), failed: failure }
}
