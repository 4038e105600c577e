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
  if (!isJsonObject(json)) return Result.fail('expected a JSON object with an "event" field')
  const event = json["event"]
  if (event === undefined) return Result.fail(`missing "event"; expected one of ${EventNames.join(", ")}`)
  if (!isEventName(event)) {
    // Only a string is quoted: any other value may be JSON nested too deep to print (docs/design.md#failures).
    const got =
      typeof event === "string"
        ? JSON.stringify(event)
        : `of type ${Array.isArray(event) ? "array" : event === null ? "null" : typeof event}`
    return Result.fail(`unknown event ${got}; expected one of ${EventNames.join(", ")}`)
  }
  const decoded = Schema.decodeUnknownResult(LineSchemas[event])(json)
  return Result.isSuccess(decoded)
    ? Result.succeed(decoded.success)
    : Result.fail(`${event}: ${oneLine(decoded.failure.message)}`)
}

/** Schema messages can span lines; the error field is one line of JSON either way, but a short line reads better. */
const oneLine = (message: string): string =>
  message
    .split("\n")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .join("; ")
