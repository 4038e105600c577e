import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as fc from "fast-check"
import { checkRequest } from "../src/RequestCheck.ts"
import { type EventName, EventNames, type JsonObject, RequestSchemas } from "../src/index.ts"

/**
 * `checkRequest` is the SDK's Schema-free reading of a request; the request Schemas state the shapes. On any request
 * both must agree: the same verdict, and on success the same request, its keys in the same order.
 */
const bySchema = (event: EventName, input: JsonObject) => Schema.decodeUnknownResult(RequestSchemas[event])(input)

// Values near the shapes: every kind a request field has, and the edges of each (a float, an unsafe integer, -0).
const leaf = fc.oneof(
  fc.boolean(),
  fc.string({ maxLength: 3 }),
  fc.integer(),
  fc.constantFrom(-0, 1.5, 2 ** 53, 1e300, Number.MAX_SAFE_INTEGER),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(null)
)
const value = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 3 }),
  object: fc.dictionary(fc.constantFrom("a", "__proto__", "toString"), tie("value"), { maxKeys: 3 })
})).value
const fieldNames = [
  "session_id",
  "id",
  "call_id",
  "tool",
  "args",
  "content",
  "is_error",
  "round",
  "messages",
  "system",
  "extra"
]
// A request as JSON.parse makes it (a key "__proto__" is an own key), with its event mostly right.
const request = fc
  .tuple(
    fc.oneof(fc.constantFrom(...EventNames), leaf),
    fc.dictionary(fc.constantFrom(...fieldNames), value, { maxKeys: 8 })
  )
  .map(([event, fields]): JsonObject => JSON.parse(JSON.stringify({ event, ...fields })))
// Or a valid request of some event with one field changed, dropped or added.
const valid: { readonly [E in EventName]: JsonObject } = {
  tool_call: { event: "tool_call", session_id: "s", id: "1", call_id: "c", tool: "t", args: { a: 1 }, round: 1 },
  tool_result: {
    event: "tool_result",
    session_id: "s",
    call_id: "c",
    tool: "t",
    args: {},
    content: "x",
    is_error: false
  },
  context: { event: "context", session_id: "s", id: 7, messages: [{ role: "user" }] },
  before_agent_start: { event: "before_agent_start", session_id: "s", system: "p" },
  before_compact: { event: "before_compact", session_id: "s", messages: [] },
  list_tools: { event: "list_tools", session_id: "s" },
  invoke_tool: { event: "invoke_tool", session_id: "s", call_id: "c", tool: "t", args: {} },
  session_start: { event: "session_start", session_id: "s", id: null },
  session_end: { event: "session_end", session_id: "s" }
}
const nearValid = fc
  .constantFrom(...EventNames)
  .chain((event) =>
    fc.tuple(
      fc.constant(event),
      fc.constantFrom(...Object.keys(valid[event]), "round", "id", "extra"),
      fc.option(fc.oneof(leaf, value), { freq: 5 })
    )
  )
  .map(([event, name, changed]): JsonObject => {
    const fields: Record<string, unknown> = { ...valid[event] }
    if (changed === null) delete fields[name]
    else fields[name] = changed
    return JSON.parse(JSON.stringify(fields))
  })

describe("the request Schemas and checkRequest", () => {
  const agree = (event: EventName, input: JsonObject) => {
    const hand = checkRequest(event, input)
    const schema = bySchema(event, input)
    expect([event, input, hand !== undefined]).toEqual([event, input, Result.isSuccess(schema)])
    if (hand !== undefined && Result.isSuccess(schema)) {
      expect(hand).toEqual(schema.success)
      expect(Object.keys(hand)).toEqual(Object.keys(schema.success))
    }
  }

  it("agree on every request: the same verdict, and the same decoded request", () => {
    fc.assert(
      fc.property(fc.oneof(request, nearValid), (input) => {
        for (const event of EventNames) agree(event, input)
      }),
      { numRuns: 1000 }
    )
  })

  it("agree on a valid request of each event, and on it as another event's", () => {
    for (const event of EventNames) {
      for (const other of EventNames) agree(event, valid[other])
      expect(checkRequest(event, valid[event])).toBeDefined()
    }
  })
})
