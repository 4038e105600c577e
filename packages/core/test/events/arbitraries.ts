import type { OnFailure } from "@abhed/protocol"
import fc from "fast-check"
import type { Reducer } from "effect"
import { expect } from "vitest"
import type { Answer } from "../../src/events/Answer.ts"

export const runs = { numRuns: 200 } as const

const names = ["a", "b", "B", "c", "é", "z1"] as const
const onFailures: ReadonlyArray<OnFailure> = ["ignore", "ask", "deny"]

/** An answer by `name`: a reply, or a failure under some on_failure. */
export const answerOf = <R>(name: string, reply: R | undefined, on_failure: OnFailure = "ignore"): Answer<R> => ({
  extension: { name, config: { on_failure } },
  reply,
  failure: reply === undefined ? `extension ${name} unavailable: it exited` : undefined
})

/** A failed answer by `name` under `on_failure`. */
export const failedOf = (name: string, on_failure: OnFailure): Answer<never> =>
  answerOf<never>(name, undefined, on_failure)

/** One round's answers, unique names, in an arbitrary (not name) order. */
export const answers = <R>(reply: fc.Arbitrary<R>): fc.Arbitrary<Array<Answer<R>>> =>
  fc
    .uniqueArray(fc.constantFrom(...names), { maxLength: names.length })
    .chain((ns) =>
      fc.tuple(
        ...ns.map((name) =>
          fc
            .tuple(fc.option(reply, { nil: undefined }), fc.constantFrom(...onFailures))
            .map(([r, f]) => answerOf(name, r, f))
        )
      )
    )

/** A reducer's laws on values drawn from `value`: associative, `initialValue` an identity, commutative. */
export const checkLaws = <A>(reducer: Reducer.Reducer<A>, value: fc.Arbitrary<A>): void => {
  fc.assert(
    fc.property(value, value, value, (a, b, c) => {
      expect(reducer.combine(reducer.combine(a, b), c)).toEqual(reducer.combine(a, reducer.combine(b, c)))
      expect(reducer.combine(a, b)).toEqual(reducer.combine(b, a))
      expect(reducer.combine(reducer.initialValue, a)).toEqual(a)
      expect(reducer.combine(a, reducer.initialValue)).toEqual(a)
    }),
    runs
  )
}

/** Folds each answer in as it arrives (in the given order), as a host reading replies one by one would. */
export const foldArrivals = <A extends Answer<unknown>>(
  reducer: Reducer.Reducer<ReadonlyArray<A>>,
  xs: ReadonlyArray<A>
) => xs.reduce((acc, x) => reducer.combine(acc, [x]), reducer.initialValue)
