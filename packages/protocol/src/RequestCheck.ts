// No effect import: the SDK checks every request it hands to a handler with this module alone, so an extension of
// plain handlers loads nothing from effect.
import type { EventName } from "./Event.ts"
import type { JsonObject } from "./Json.ts"
import type { RequestOf } from "./Request.ts"

/**
 * The request Schemas (Request.ts) as hand checks: the fast path of the SDK, which reads each request its handlers
 * see. Loading effect's Schema costs an extension process about 0.3 s of CPU (more than the rest of its start but
 * Node's own), and every session starts its extensions. `checkRequest` accepts exactly what the event's Schema accepts
 * and hands back exactly what it decodes (RequestCheck.test.ts holds the two to it); a request it rejects is for the
 * Schema to explain.
 */

type Kind = "string" | "int" | "boolean" | "record" | "array" | "unknown"

/** One field of a request: its kind, and whether the key may be missing. In the Schema's order. */
type Spec = readonly [name: string, kind: Kind, optional?: "optional"]

const base: ReadonlyArray<Spec> = [
  ["session_id", "string"],
  ["id", "unknown", "optional"]
]
const call: ReadonlyArray<Spec> = [
  ["call_id", "string"],
  ["tool", "string"],
  ["args", "record"]
]
const round: Spec = ["round", "int", "optional"]

const RequestFields: { readonly [E in EventName]: ReadonlyArray<Spec> } = {
  tool_call: [...base, ...call, round],
  tool_result: [...base, ...call, ["content", "string"], ["is_error", "boolean"], round],
  context: [...base, ["messages", "array"]],
  before_agent_start: [...base, ["system", "string"]],
  before_compact: [...base, ["messages", "array"]],
  list_tools: base,
  invoke_tool: [...base, ...call],
  session_start: base,
  session_end: base
}

const isRecord = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/** A field the Schema would reject. */
const Reject: unique symbol = Symbol("Reject")

/** The field's value as the Schema decodes it (a record or array copied, as the Schema does), or `Reject`. */
const field = (kind: Kind, u: unknown): unknown => {
  switch (kind) {
    case "string":
      return typeof u === "string" ? u : Reject
    case "int":
      return typeof u === "number" && Number.isSafeInteger(u) ? u : Reject
    case "boolean":
      return typeof u === "boolean" ? u : Reject
    // Own keys as data (`Object.fromEntries`): a key "__proto__" stays a key, as JSON.parse made it.
    case "record":
      return isRecord(u) ? Object.fromEntries(Object.entries(u)) : Reject
    case "array":
      return Array.isArray(u) ? u.slice() : Reject
    case "unknown":
      return u
  }
}

/**
 * The request as `event`'s Schema decodes it (its fields in the Schema's order, other keys dropped), or undefined
 * when the Schema would reject it.
 */
export const checkRequest = <E extends EventName>(event: E, request: JsonObject): RequestOf<E> | undefined => {
  if (request["event"] !== event || !Object.hasOwn(request, "event")) return undefined
  const out: Record<string, unknown> = { event }
  for (const [name, kind, optional] of RequestFields[event]) {
    if (!Object.hasOwn(request, name)) {
      if (optional === undefined) return undefined
      continue
    }
    const value = field(kind, request[name])
    if (value === Reject) return undefined
    out[name] = value
  }
  // Every field of the event's Schema was checked above, in its order: `out` is what the Schema decodes.
  return out as RequestOf<E>
}
