import type { JsonObject, ToolCallReply } from "@abhed/protocol"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ToolCall from "../../src/events/ToolCall.ts"
import type { PolicyDecision } from "../../src/Policy.ts"
import { settle, type SettleOutcome } from "../../src/Settling.ts"
import { ask, deny, none, type Verdict } from "../../src/Verdict.ts"
import { answerOf, failedOf, answers, checkLaws, runs } from "./arbitraries.ts"

const allow: PolicyDecision = { level: "allow", source: "default", reason: undefined }
const reply: fc.Arbitrary<ToolCallReply> = fc.record(
  {
    block: fc.boolean(),
    ask: fc.boolean(),
    reason: fc.constantFrom("r1", "r2", ""),
    args: fc.constantFrom({ c: 1 }, { c: 2 })
  },
  { requiredKeys: [] }
)
const settled = (value: Verdict, payload: JsonObject = {}): SettleOutcome<JsonObject, Verdict> => ({
  _tag: "Settled",
  payload,
  rounds: 1,
  value,
  adopted: []
})

describe("ToolCall rule", () => {
  it("a failed guard's verdict is its on_failure's, with its failure as the reason", () => {
    const failure = "extension g unavailable: it exited"
    expect(ToolCall.verdictOf(failedOf("g", "deny"))).toEqual(deny("g", failure))
    expect(ToolCall.verdictOf(failedOf("g", "ask"))).toEqual(ask("g", failure))
    expect(ToolCall.verdictOf(failedOf("g", "ignore"))).toEqual(none)
    expect(ToolCall.verdictOf(answerOf("g", { block: true }, "ignore"))).toEqual(deny("g", "blocked by g"))
  })

  it("a round reply carries the rewrite as the proposal", () => {
    expect(ToolCall.roundReply(answerOf("g", { args: { c: 1 } }))).toEqual({
      name: "g",
      proposal: { c: 1 },
      value: none
    })
    expect(ToolCall.roundReply(failedOf("g", "deny")).proposal).toBeUndefined()
  })

  it("a deny stops the rounds; ask and none do not", () => {
    expect([deny("a", "r"), ask("a", "r"), none].map(ToolCall.stop)).toEqual([true, false, false])
  })

  it("refused: denied with the host's reason, no args, and the note says it reached nobody", () => {
    expect(ToolCall.refused("args: too deep")).toEqual({
      outcome: { decision: "deny", reasons: [{ extension: "host", reason: "args: too deep" }], args: {}, rounds: 0 },
      notes: ["not sent to any extension: args: too deep"]
    })
  })

  it("finish: the policy joined with the verdict, the settled args, and the notes", () => {
    expect(ToolCall.finish(settled(ask("g", "sure?"), { c: 1 }), allow)).toEqual({
      outcome: {
        decision: "ask",
        reasons: [{ extension: "g", reason: "sure?" }],
        args: { c: 1 },
        rounds: 1,
        rewrittenBy: []
      },
      notes: ["policy: allow (default)", "settling: Settled"]
    })
    const denied: PolicyDecision = { level: "deny", source: "rule 1", reason: "no" }
    expect(ToolCall.finish(settled(none), denied).outcome.reasons).toEqual([{ extension: "policy", reason: "no" }])
  })

  it("finish: an unsettled fight denies, naming every fighter", () => {
    const unsettled: SettleOutcome<JsonObject, Verdict> = {
      _tag: "Unsettled",
      payload: { c: 2 },
      rounds: 3,
      value: ask("x", "hm"),
      proposers: ["b"],
      fighters: ["a", "b"],
      adopted: ["a", "b"]
    }
    const { notes, outcome } = ToolCall.finish(unsettled, allow)
    expect(outcome.decision).toBe("deny")
    expect(outcome.reasons).toEqual([
      { extension: "a", reason: "rewrites did not settle: a, b" },
      { extension: "b", reason: "rewrites did not settle: a, b" }
    ])
    expect(notes).toContain("settling: Unsettled")
  })

  it("the reducer is a commutative monoid", () => {
    const verdict = answers(reply).map((xs) => ToolCall.reducer.combineAll(xs.map(ToolCall.verdictOf)))
    checkLaws(ToolCall.reducer, verdict)
  })

  it("the outcome does not depend on the order the answers arrive in", () => {
    fc.assert(
      fc.property(
        answers(reply).chain((xs) => fc.tuple(fc.constant(xs), fc.shuffledSubarray(xs, { minLength: xs.length }))),
        ([xs, ys]) => {
          const run = (order: typeof xs) =>
            ToolCall.finish(
              settle({
                initial: {},
                reducer: ToolCall.reducer,
                stop: ToolCall.stop,
                maxRounds: 3,
                round: () => order.map(ToolCall.roundReply)
              }),
              allow
            )
          expect(run(ys)).toEqual(run(xs))
        }
      ),
      runs
    )
  })
})
