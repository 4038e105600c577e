import type { BeforeAgentStartReply } from "@abhed/protocol"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as BeforeAgentStart from "../../src/events/BeforeAgentStart.ts"
import { answerOf, failedOf, answers, foldArrivals, runs } from "./arbitraries.ts"

const reply: fc.Arbitrary<BeforeAgentStartReply> = fc.record(
  { system: fc.constantFrom("", "x", "y") },
  { requiredKeys: [] }
)

describe("BeforeAgentStart rule", () => {
  it("appends the texts in name order; a failed extension appends nothing", () => {
    expect(
      BeforeAgentStart.finish("sys", [
        answerOf("a", { system: "A" }),
        failedOf("f", "deny"),
        answerOf("z", { system: "Z" })
      ])
    ).toEqual({
      outcome: { system: "sys\n\nA\n\nZ" },
      notes: []
    })
  })

  it("the outcome does not depend on the order the answers arrive in", () => {
    fc.assert(
      fc.property(
        answers(reply).chain((xs) => fc.tuple(fc.constant(xs), fc.shuffledSubarray(xs, { minLength: xs.length }))),
        ([xs, ys]) => {
          const { reducer } = BeforeAgentStart
          expect(BeforeAgentStart.finish("s", foldArrivals(reducer, ys))).toEqual(
            BeforeAgentStart.finish("s", foldArrivals(reducer, xs))
          )
        }
      ),
      runs
    )
  })
})
