// The protocol's own modules, not its index: this is all an extension with handlers loads beyond the SDK, and none of
// it loads effect (the index would add ~15 MiB to every such process).
import { type EventName, isEventName } from "@abhed/protocol/Event"
import type { JsonObject } from "@abhed/protocol/Json"
import { checkReply, replyProblemText } from "@abhed/protocol/ReplyCheck"
import type { RequestOf } from "@abhed/protocol/Request"
import { checkRequest } from "@abhed/protocol/RequestCheck"
import { describe } from "./Describe.ts"

/**
 * The protocol checks the SDK runs around a handler: the request checked against its event's schema, the reply
 * checked and encoded. Responder.ts loads this module when a request first reaches a handler: an extension that
 * answers everything with `{}` never loads it. Neither check loads effect: they are the protocol's hand checks, held to
 * its Schemas by property tests; effect's Schema is loaded only to say what is wrong with a request they reject (about
 * 0.3 s of CPU that an extension would otherwise pay at its first request).
 */

export { isEventName }

/** A check's outcome: the value, or what is wrong with it (the shape of effect's `Result`, without loading it). */
export type Checked<A> =
  | { readonly _tag: "Success"; readonly success: A }
  | { readonly _tag: "Failure"; readonly failure: string }

const succeed = <A>(success: A): Checked<A> => ({ _tag: "Success", success })
const fail = <A>(failure: string): Checked<A> => ({ _tag: "Failure", failure })

/** The request as its handler sees it, or what is wrong with it (the Schema's words: it has the last word). */
export const decodeRequest = async <E extends EventName>(
  event: E,
  request: JsonObject
): Promise<Checked<RequestOf<E>>> => {
  const checked = checkRequest(event, request)
  if (checked !== undefined) return succeed(checked)
  const { decodeBySchema } = await import("./RequestSchema.ts")
  return decodeBySchema(event, request)
}

/**
 * The reply encoded as one JSON object (no newline), or why it cannot be sent. Fields that do not belong to the
 * event are dropped (as the host would ignore them). Never throws: a value the types did not guard (a BigInt
 * field, a getter that throws) is reported too.
 */
export const encodeReply = (event: EventName, reply: unknown): Checked<string> => {
  try {
    const checked = checkReply(event, reply)
    if (checked._tag === "Failure") {
      return fail(
        `${event}: handler returned a malformed reply (sent "failed" instead): ${replyProblemText(checked.problem)}`
      )
    }
    // A handler may say itself that it could not answer (`{ failed: why }`): sent as that alone.
    const text = JSON.stringify(checked.failed === undefined ? checked.reply : { failed: checked.failed })
    // JSON.stringify returns undefined for functions and symbols, despite its declared type.
    if (typeof text !== "string")
      return fail(`${event}: reply cannot be encoded as JSON: got ${typeof reply} (sent "failed" instead)`)
    // The text is checked too, as the host will read it: a nested `toJSON` or getter runs again when encoding and
    // can turn a checked value into one the host rejects (`args` as a string), which would mark the extension dead.
    const sent = checkReply(event, JSON.parse(text))
    return sent._tag === "Failure"
      ? fail(
          `${event}: handler's reply encodes as a malformed reply (a toJSON or getter changed it; sent "failed" instead): ${replyProblemText(sent.problem)}`
        )
      : succeed(text)
  } catch (error) {
    return fail(`${event}: handler returned a reply that cannot be checked (sent "failed" instead): ${describe(error)}`)
  }
}
