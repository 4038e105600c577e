import {
  BeforeAgentStartRequest,
  BeforeCompactRequest,
  ContextRequest,
  EventNames,
  InvokeToolRequest,
  isEventName,
  isJsonObject,
  ListToolsRequest,
  SessionEndRequest,
  SessionStartRequest,
  ToolCallRequest,
  ToolResultRequest
} from "@abhed/protocol"
import { closestName, renderPath, schemaProblems } from "@abhed/protocol/ConfigIssues"
import { Result, Schema } from "effect"

/**
 * One input line of `abhed-ext run` (docs/design.md#output): a request as on the wire, except that `session_id` and
 * `call_id` may be left out (the host fills them in; `id` is always the host's). Pure: text in, a typed request or a
 * one-line reason out.
 */

// `id` names a round of the host's (docs/design.md#wire-protocol): the host gives every round its own, so one given
// here is ignored.
const optionalIds = {
  session_id: Schema.optionalKey(Schema.String),
  id: Schema.optionalKey(Schema.String),
  call_id: Schema.optionalKey(Schema.String)
}
const optionalSession = { session_id: Schema.optionalKey(Schema.String), id: Schema.optionalKey(Schema.String) }

// The wire schemas with the ids made optional: the field types stay exactly the protocol's.
export const InputSchemas = {
  tool_call: Schema.Struct({ ...ToolCallRequest.fields, ...optionalIds }),
  tool_result: Schema.Struct({ ...ToolResultRequest.fields, ...optionalIds }),
  context: Schema.Struct({ ...ContextRequest.fields, ...optionalSession }),
  before_agent_start: Schema.Struct({ ...BeforeAgentStartRequest.fields, ...optionalSession }),
  before_compact: Schema.Struct({ ...BeforeCompactRequest.fields, ...optionalSession }),
  list_tools: Schema.Struct({ ...ListToolsRequest.fields, ...optionalSession }),
  invoke_tool: Schema.Struct({ ...InvokeToolRequest.fields, ...optionalIds }),
  session_start: Schema.Struct({ ...SessionStartRequest.fields, ...optionalSession }),
  session_end: Schema.Struct({ ...SessionEndRequest.fields, ...optionalSession })
} as const

export type InputSchemas = typeof InputSchemas
/** A request ready for the host: its ids may still be missing, every other field is there. */
export type InputRequest = { readonly [E in keyof InputSchemas]: InputSchemas[E]["Type"] }[keyof InputSchemas]

/**
 * What an input line may hold: a request, except that a `tool_result` may leave out `args` as well. Its call
 * already carried them, and the call ids pair the two, so `run` takes them from there (CallIds.ts).
 */
const LineSchemas = {
  ...InputSchemas,
  tool_result: Schema.Struct({
    ...InputSchemas.tool_result.fields,
    args: Schema.optionalKey(ToolResultRequest.fields.args)
  })
} as const

export type InputLine = {
  readonly [E in keyof typeof LineSchemas]: (typeof LineSchemas)[E]["Type"]
}[keyof typeof LineSchemas]

/** A blank (or whitespace-only) line carries no request: `run` skips it without output. */
export const isBlank = (text: string): boolean => text.trim() === ""

/** Decode one input line. The failure is a one-line message fit for `{"error": …, "line": N}`. */
export const decodeInputLine = (text: string): Result.Result<InputLine, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    return Result.fail(`invalid JSON: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
  if (!isJsonObject(json)) {
    const got = Array.isArray(json)
      ? "an array (one request per line, not a list of them)"
      : json === null
        ? "null"
        : `a ${typeof json}`
    return Result.fail(`expected a JSON object with an "event" field, got ${got}`)
  }
  const event = json["event"]
  if (event === undefined) return Result.fail(`missing "event"; expected one of ${EventNames.join(", ")}`)
  if (!isEventName(event)) {
    // Only a string is quoted: any other value may be JSON nested too deep to print (docs/design.md#failures).
    const got =
      typeof event === "string"
        ? JSON.stringify(event)
        : `of type ${Array.isArray(event) ? "array" : event === null ? "null" : typeof event}`
    const hint = typeof event === "string" ? closestName(event, EventNames) : undefined
    return Result.fail(
      `unknown event ${got}; expected one of ${EventNames.join(", ")}${hint === undefined ? "" : `; did you mean "${hint}"?`}`
    )
  }
  const decoded = Schema.decodeUnknownResult(LineSchemas[event])(json, { errors: "all", reportInput: true })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  // Every problem, by its path, in the words of the config's errors: `tool_call: args: must be an object, got "x"`.
  const problems = schemaProblems(decoded.failure.issue).map((p) => `${renderPath(p.path)}: ${p.message}`)
  return Result.fail(`${event}: ${problems.join("; ")}`)
}
