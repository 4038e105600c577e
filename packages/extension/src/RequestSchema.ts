import type { EventName } from "@abhed/protocol/Event"
import type { JsonObject } from "@abhed/protocol/Json"
import { type RequestOf, RequestSchemas } from "@abhed/protocol/Request"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

/**
 * Requests decoded by the protocol's Schema, for a request the hand check (`checkRequest`) rejects: the Schema says
 * what is wrong with it, and has the last word. It loads effect's Schema, so Checks.ts imports it only then.
 */

type Decoders = { readonly [E in EventName]: (request: JsonObject) => Result.Result<RequestOf<E>, string> }

const decoder = <E extends EventName>(schema: Schema.Decoder<RequestOf<E>>) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (request: JsonObject): Result.Result<RequestOf<E>, string> =>
    Result.mapError(decode(request), (error) => error.message)
}

const decoders: Decoders = {
  tool_call: decoder(RequestSchemas.tool_call),
  tool_result: decoder(RequestSchemas.tool_result),
  context: decoder(RequestSchemas.context),
  before_agent_start: decoder(RequestSchemas.before_agent_start),
  before_compact: decoder(RequestSchemas.before_compact),
  list_tools: decoder(RequestSchemas.list_tools),
  invoke_tool: decoder(RequestSchemas.invoke_tool),
  session_start: decoder(RequestSchemas.session_start),
  session_end: decoder(RequestSchemas.session_end)
}

/** The request as its handler sees it, or what is wrong with it, by the event's Schema. */
export const decodeBySchema = <E extends EventName>(
  event: E,
  request: JsonObject
): Result.Result<RequestOf<E>, string> => decoders[event](request)
