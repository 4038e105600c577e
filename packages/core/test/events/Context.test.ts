import type { ContextReply } from "@abhed/protocol"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Answer, AnswersReducer } from "../../src/events/Answer.ts"
import * as Context from "../../src/events/Context.ts"
import { answerOf, failedOf, answers, foldArrivals, runs } from "./arbitraries.ts"

const messages = ["m0", "m1", "m2", "m3"]
const reply: fc.Arbitrary<ContextReply> = fc.record(
  { keep: fc.array(fc.oneof(fc.integer({ min: -1, max: 5 }), fc.constant("x"))) },
  {
    requiredKeys: []
  }
)

describe("Context rule", () => {
  it("keeps the intersection, and notes the indices that name no message", () => {
    expect(
      Context.finish(messages, [answerOf("a", { keep: [0, 2, 3] }), answerOf("b", { keep: [2, 3, 9, "x"] })])
    ).toEqual({
      outcome: { keep: [2, 3], messages: ["m2", "m3"], withheld: [] },
      notes: ['b: keep indices that name no message ignored: 9, "<1 chars>"']
    })
  })

  it("a failed filter withholds everything unless its on_failure is ignore (ask acts as deny)", () => {
    const failure = "extension f unavailable: it exited"
    for (const mode of ["ask", "deny"] as const) {
      expect(Context.finish(messages, [answerOf("a", { keep: [1] }), failedOf("f", mode)])).toEqual({
        outcome: { keep: [], messages: [], withheld: [{ extension: "f", reason: failure }] },
        notes: [`context withheld: ${failure}`]
      })
    }
    expect(Context.finish(messages, [answerOf("a", { keep: [1] }), failedOf("f", "ignore")]).outcome.keep).toEqual([1])
  })

  it("refused: nothing kept, the host's reason", () => {
    expect(Context.refused("messages: too deep")).toEqual({
      outcome: { keep: [], messages: [], withheld: [{ extension: "host", reason: "messages: too deep" }] },
      notes: ["not sent to any extension: messages: too deep"]
    })
  })

  it("the outcome does not depend on the order the answers arrive in", () => {
    const reducer = AnswersReducer<Answer<ContextReply>>()
    fc.assert(
      fc.property(
        answers(reply).chain((xs) => fc.tuple(fc.constant(xs), fc.shuffledSubarray(xs, { minLength: xs.length }))),
        ([xs, ys]) => {
          expect(Context.finish(messages, foldArrivals(reducer, ys))).toEqual(
            Context.finish(messages, foldArrivals(reducer, xs))
          )
        }
      ),
      runs
    )
  })
})
