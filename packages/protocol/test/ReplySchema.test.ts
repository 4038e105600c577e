import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as fc from "fast-check"
import {
  decodeReply,
  type EventName,
  EventNames,
  isJsonObject,
  KnownReplyFields,
  ReplyFields,
  ReplySchemas
} from "../src/index.ts"

/**
 * `decodeReply` checks replies by hand (the fast path); the reply Schemas state their shapes. On any reply both must
 * agree: the same verdict, and on success the same reply. The Schema side drops nulls first (a null field counts as
 * absent) and ignores unknown keys, as the wire rules say.
 */
const bySchema = (event: EventName, input: unknown) => {
  const withoutNulls = isJsonObject(input)
    ? Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null))
    : input
  // The fields of the event only: a Struct without fields hands its input back whole.
  const fields = Object.keys(ReplyFields[event])
  return Result.map(Schema.decodeUnknownResult(ReplySchemas[event])(withoutNulls), (decoded) =>
    Object.fromEntries(Object.entries(decoded).filter(([k]) => fields.includes(k)))
  )
}

// Values near the shapes: the right type, a wrong one, or a nested one, for every known field.
const leaf = fc.oneof(
  fc.boolean(),
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(null)
)
const near = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object"), tie("tool")),
  array: fc.array(tie("value"), { maxLength: 3 }),
  object: fc.dictionary(fc.constantFrom("a", "type", "name"), tie("value"), { maxKeys: 3 }),
  tool: fc.record({ name: tie("value"), description: tie("value"), input_schema: tie("value") }, { requiredKeys: [] })
})).value
const reply = fc.oneof(near, fc.dictionary(fc.constantFrom(...KnownReplyFields, "id", "extra"), near, { maxKeys: 5 }))

describe("the reply Schemas and decodeReply's hand checks", () => {
  it("agree on every reply: the same verdict, and the same decoded reply", () => {
    fc.assert(
      fc.property(fc.constantFrom(...EventNames), reply, (event, input) => {
        const hand = decodeReply(event, input)
        const schema = bySchema(event, input)
        expect([event, Result.isSuccess(hand)]).toEqual([event, Result.isSuccess(schema)])
        if (Result.isSuccess(hand) && Result.isSuccess(schema)) expect(hand.success.reply).toEqual(schema.success)
      }),
      { numRuns: 3000 }
    )
  })

  it("agree on the typical replies", () => {
    for (const event of EventNames) {
      for (const input of [{}, { block: true, reason: "x", id: "1" }, { content: "x", is_error: null }]) {
        expect(Result.isSuccess(decodeReply(event, input))).toBe(Result.isSuccess(bySchema(event, input)))
      }
    }
  })
})
