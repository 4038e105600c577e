import type { ToolResultReply } from "@abhed/protocol"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ToolResult from "../../src/events/ToolResult.ts"
import { settle, type SettleOutcome } from "../../src/Settling.ts"
import { answerOf, failedOf, answers, checkLaws, runs } from "./arbitraries.ts"

const reply: fc.Arbitrary<ToolResultReply> = fc.record(
  { is_error: fc.boolean(), content: fc.constantFrom("x", "y") },
  { requiredKeys: [] }
)
const settled = (value: ToolResult.Value, payload = "out"): SettleOutcome<string, ToolResult.Value> => ({
  _tag: "Settled",
  payload,
  rounds: 1,
  value,
  adopted: []
})
const quiet = ToolResult.reducer.initialValue

describe("ToolResult rule", () => {
  it("a failure withholds unless its on_failure is ignore; a reply can raise is_error, never lower it", () => {
    const failure = "extension g unavailable: it exited"
    expect(ToolResult.valueOf(failedOf("g", "deny"))).toEqual({ isError: false, withheldBy: [failure] })
    expect(ToolResult.valueOf(failedOf("g", "ask"))).toEqual({ isError: false, withheldBy: [failure] })
    expect(ToolResult.valueOf(failedOf("g", "ignore"))).toEqual(quiet)
    expect(ToolResult.valueOf(answerOf("g", { is_error: true }))).toEqual({ isError: true, withheldBy: [] })
    expect(
      ToolResult.finish(true, settled(ToolResult.valueOf(answerOf("g", { is_error: false })))).outcome.is_error
    ).toBe(true)
  })

  it("finish: the settled content; withheld (as an error) by failures, sorted, each once", () => {
    expect(ToolResult.finish(false, settled(quiet))).toEqual({
      outcome: { content: "out", is_error: false, rounds: 1 },
      notes: ["settling: Settled"]
    })
    const value = ToolResult.reducer.combineAll([
      { isError: false, withheldBy: ["z down"] },
      { isError: false, withheldBy: ["a down"] },
      { isError: false, withheldBy: ["z down"] }
    ])
    expect(ToolResult.finish(false, settled(value)).outcome).toEqual({
      content: "[withheld: a down; z down]",
      is_error: true,
      rounds: 1
    })
  })

  it("finish: content that did not settle is withheld, naming the fighters", () => {
    const unsettled: SettleOutcome<string, ToolResult.Value> = {
      _tag: "Unsettled",
      payload: "x",
      rounds: 3,
      value: quiet,
      proposers: ["b"],
      fighters: ["a", "b"],
      adopted: ["a", "b"]
    }
    expect(ToolResult.finish(false, unsettled).outcome).toEqual({
      content: "[withheld: rewrites did not settle: a, b]",
      is_error: true,
      rounds: 3
    })
  })

  it("refused: an error result naming why, sent to nobody", () => {
    expect(ToolResult.refused("args: too deep")).toEqual({
      outcome: { content: "[withheld: args: too deep]", is_error: true, rounds: 0 },
      notes: ["not sent to any extension: args: too deep"]
    })
  })

  it("the reducer is a commutative monoid", () => {
    checkLaws(
      ToolResult.reducer,
      answers(reply).map((xs) => ToolResult.reducer.combineAll(xs.map(ToolResult.valueOf)))
    )
  })

  it("the outcome does not depend on the order the answers arrive in", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        answers(reply).chain((xs) => fc.tuple(fc.constant(xs), fc.shuffledSubarray(xs, { minLength: xs.length }))),
        (isError, [xs, ys]) => {
          const run = (order: typeof xs) =>
            ToolResult.finish(
              isError,
              settle({
                initial: "out",
                reducer: ToolResult.reducer,
                stop: ToolResult.stop,
                maxRounds: 3,
                round: () => order.map(ToolResult.roundReply)
              })
            )
          expect(run(ys)).toEqual(run(xs))
        }
      ),
      runs
    )
  })
})
