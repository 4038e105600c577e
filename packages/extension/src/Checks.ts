// From the protocol's own modules and effect's submodules, not the two packages' indexes: this is all an
// extension with handlers loads beyond the SDK, and the indexes would add ~15 MiB to every such process.
import { type EventName, isEventName } from "@abhed/protocol/Event"
import type { JsonObject } from "@abhed/protocol/Json"
import { decodeReply } from "@abhed/protocol/Reply"
import { type RequestOf, RequestSchemas } from "@abhed/protocol/Request"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { describe } from "./Describe.ts"

/**
 * The protocol checks the SDK runs around a handler: the request decoded against its event's schema, the reply
 * checked and encoded. They need `effect`'s Schema, so Responder.ts loads this module only when a request reaches
 * a handler: an extension that answers everything with `{}` never loads it.
 */

export { isEventName }

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

/** The request as its handler sees it, or what is wrong with it. */
export const decodeRequest = <E extends EventName>(
  event: E,
  request: JsonObject
): Result.Result<RequestOf<E>, string> => decoders[event](request)

/**
 * The reply encoded as one JSON object (no newline), or why it cannot be sent. Fields that do not belong to the
 * event are dropped (as the host would ignore them). Never throws: a value the types did not guard (a BigInt
 * field, a getter that throws) is reported too.
 */
export const encodeReply = (event: EventName, reply: unknown): Result.Result<string, string> => {
  try {
    const decoded = decodeReply(event, reply)
    if (Result.isFailure(decoded)) {
      return Result.fail(`${event}: handler returned a malformed reply (sent {} instead): ${decoded.failure.message}`)
    }
    const text = JSON.stringify(decoded.success.reply)
    // JSON.stringify returns undefined for functions and symbols, despite its declared type.
    if (typeof text !== "string")
      return Result.fail(`${event}: reply cannot be encoded as JSON: got ${typeof reply} (sent {} instead)`)
    // The text is checked too, as the host will read it: a nested `toJSON` or getter runs again when encoding and
    // can turn a checked value into one the host rejects (`args` as a string), which would mark the extension dead.
    const sent = decodeReply(event, JSON.parse(text))
    return Result.isFailure(sent)
      ? Result.fail(
          `${event}: handler's reply encodes as a malformed reply (a toJSON or getter changed it; sent {} instead): ${sent.failure.message}`
        )
      : Result.succeed(text)
  } catch (error) {
    return Result.fail(
      `${event}: handler returned a reply that cannot be checked (sent {} instead): ${describe(error)}`
    )
  }
}
