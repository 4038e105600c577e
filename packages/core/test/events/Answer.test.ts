import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Answer, AnswersReducer, onFailureOf, repliesOf } from "../../src/events/Answer.ts"
import { answerOf, failedOf, answers, foldArrivals, runs } from "./arbitraries.ts"

const reducer = AnswersReducer<Answer<number>>()
const sorted = answers(fc.integer()).map((xs) => foldArrivals(reducer, xs))

describe("Answer", () => {
  it("a failure counts as its on_failure; an answer that did not fail counts as nothing to fail on", () => {
    expect(onFailureOf(failedOf("a", "deny"))).toBe("deny")
    expect(onFailureOf(answerOf("a", 1, "deny"))).toBe("ignore")
  })

  it("repliesOf names the replies and leaves the failures out, in the answers' order", () => {
    expect(repliesOf([answerOf("b", 2), failedOf("a", "deny"), answerOf("c", 3)])).toEqual([
      { name: "b", value: 2 },
      { name: "c", value: 3 }
    ])
  })

  it("AnswersReducer: the laws, on name-ordered lists of distinct names", () => {
    // Distinct names across the three lists: one round's answers come from distinct extensions.
    const split = answers(fc.integer()).chain((xs) =>
      fc.tuple(...xs.map(() => fc.integer({ min: 0, max: 2 }))).map((parts) =>
        [0, 1, 2].map((p) =>
          foldArrivals(
            reducer,
            xs.filter((_, i) => parts[i] === p)
          )
        )
      )
    )
    fc.assert(
      fc.property(split, ([a = [], b = [], c = []]) => {
        expect(reducer.combine(reducer.combine(a, b), c)).toEqual(reducer.combine(a, reducer.combine(b, c)))
        expect(reducer.combine(a, b)).toEqual(reducer.combine(b, a))
        expect(reducer.combine(reducer.initialValue, a)).toEqual(a)
      }),
      runs
    )
  })

  it("AnswersReducer: any arrival order gives the name-ordered list (code units, not locale)", () => {
    fc.assert(
      fc.property(sorted, (xs) => {
        const names = xs.map((x) => x.extension.name)
        expect(names).toEqual([...names].sort())
      }),
      runs
    )
    fc.assert(
      fc.property(
        answers(fc.integer()).chain((xs) =>
          fc.tuple(fc.constant(xs), fc.shuffledSubarray(xs, { minLength: xs.length }))
        ),
        ([xs, ys]) => {
          expect(foldArrivals(reducer, ys)).toEqual(foldArrivals(reducer, xs))
        }
      ),
      runs
    )
  })
})
