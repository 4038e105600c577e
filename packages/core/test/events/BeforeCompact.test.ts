import type { BeforeCompactReply } from "@abhed/protocol"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as BeforeCompact from "../../src/events/BeforeCompact.ts"
import { answerOf, answers, foldArrivals, runs } from "./arbitraries.ts"

const reply: fc.Arbitrary<BeforeCompactReply> = fc.record(
  { cancel: fc.boolean(), summary: fc.constantFrom("", "s1", "s2") },
  {
    requiredKeys: []
  }
)

describe("BeforeCompact rule", () => {
  it("any cancel wins, noted with who cancelled", () => {
    expect(
      BeforeCompact.finish([
        answerOf("b", { cancel: true }),
        answerOf("a", { summary: "S" }),
        answerOf("c", { cancel: true })
      ])
    ).toEqual({
      outcome: { cancel: true, summary: null },
      notes: ["cancelled by b, c"]
    })
  })

  it("otherwise the summaries in name order", () => {
    expect(BeforeCompact.finish([answerOf("a", { summary: "A" }), answerOf("b", { summary: "B" })])).toEqual({
      outcome: { cancel: false, summary: "A\n\nB" },
      notes: []
    })
  })

  it("refused: cancelled, nothing compacted unseen", () => {
    expect(BeforeCompact.refused("messages: too deep")).toEqual({
      outcome: { cancel: true, summary: null },
      notes: ["not sent to any extension: messages: too deep"]
    })
  })

  it("the outcome does not depend on the order the answers arrive in", () => {
    fc.assert(
      fc.property(
        answers(reply).chain((xs) => fc.tuple(fc.constant(xs), fc.shuffledSubarray(xs, { minLength: xs.length }))),
        ([xs, ys]) => {
          const { reducer } = BeforeCompact
          expect(BeforeCompact.finish(foldArrivals(reducer, ys))).toEqual(
            BeforeCompact.finish(foldArrivals(reducer, xs))
          )
        }
      ),
      runs
    )
  })
})
