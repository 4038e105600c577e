import type { JsonObject } from "@abhed/protocol"
import { Effect, Reducer, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { type RoundReply, settle, settleEffect, settleStep, unsettledReason } from "../src/Settling.ts"
import { ask, deny, none, type Verdict, VerdictReducer } from "../src/Verdict.ts"

type Sub = (payload: JsonObject, round: number) => { proposal?: JsonObject; value?: Verdict }
const run = (subs: Record<string, Sub>, initial: JsonObject, maxRounds = 4) => {
  const seen: Array<[number, string, JsonObject]> = []
  const outcome = settle<JsonObject, Verdict>({
    initial,
    reducer: VerdictReducer,
    stop: (v) => v.level === "deny",
    maxRounds,
    round: (payload, round) =>
      Object.entries(subs).map(([name, f]): RoundReply<JsonObject, Verdict> => {
        seen.push([round, name, payload])
        const r = f(payload, round)
        return { name, proposal: r.proposal, value: r.value ?? none }
      })
  })
  return { outcome, seen }
}

describe("settleStep", () => {
  it("undefined and equal proposals (any key order) are not proposals", () => {
    expect(
      settleStep({ a: 1, b: [1, { c: 2, d: 3 }] }, [
        { name: "x", value: undefined },
        { name: "y", value: { b: [1, { d: 3, c: 2 }], a: 1 } }
      ])
    ).toEqual({ _tag: "Settled" })
    expect(settleStep({ a: 1 }, [])).toEqual({ _tag: "Settled" })
  })
  it("adopts the lowest-named differing proposal, whatever the input order", () => {
    expect(
      settleStep({ a: 1 }, [
        { name: "m", value: { a: 2 } },
        { name: "b", value: { a: 1 } },
        { name: "c", value: { a: 3 } }
      ])
    ).toEqual({ _tag: "Next", payload: { a: 3 }, proposer: "c" })
  })
})

describe("settle", () => {
  it("no proposals → settled after one round", () => {
    const { outcome } = run({ a: () => ({}), b: () => ({ value: ask("b", "?") }) }, { x: 1 })
    expect(outcome).toEqual({ _tag: "Settled", payload: { x: 1 }, rounds: 1, value: ask("b", "?"), adopted: [] })
  })
  it("a rewrite is shown to everyone once more before it settles", () => {
    const { outcome, seen } = run(
      {
        redact: (p) => (p["cmd"] === "SECRET" ? { proposal: { cmd: "***" } } : {}),
        watch: () => ({})
      },
      { cmd: "SECRET" }
    )
    expect(outcome).toMatchObject({ _tag: "Settled", payload: { cmd: "***" }, rounds: 2, adopted: ["redact"] })
    expect(seen).toEqual([
      [1, "redact", { cmd: "SECRET" }],
      [1, "watch", { cmd: "SECRET" }],
      [2, "redact", { cmd: "***" }],
      [2, "watch", { cmd: "***" }]
    ])
  })
  it("the verdict is the join over all rounds", () => {
    const { outcome } = run(
      {
        asker: (_p, round) => (round === 1 ? { value: ask("asker", "first look") } : {}),
        rewriter: (p) => (p["x"] === 1 ? {} : { proposal: { x: 1 } })
      },
      { x: 0 }
    )
    expect(outcome).toEqual({
      _tag: "Settled",
      payload: { x: 1 },
      rounds: 2,
      value: ask("asker", "first look"),
      adopted: ["rewriter"]
    })
  })
  it("fighting rewriters → Unsettled after maxRounds, with the last round's proposers", () => {
    const { outcome, seen } = run(
      {
        b: (p) => (p["x"] === 2 ? {} : { proposal: { x: 2 } }),
        a: (p) => (p["x"] === 1 ? {} : { proposal: { x: 1 } })
      },
      { x: 0 },
      3
    )
    // Round 3 fans out x=2, so only a still proposes.
    expect(outcome).toEqual({
      _tag: "Unsettled",
      payload: { x: 2 },
      rounds: 3,
      value: none,
      proposers: ["a"],
      fighters: ["a", "b"],
      // Round 1: a (lowest name) adopted, x=1; round 2: b, x=2; round 3 ends unsettled.
      adopted: ["a", "b"]
    })
    expect(seen.map(([r, n, p]) => `${r}${n}${p["x"]}`)).toEqual(["1b0", "1a0", "2b1", "2a1", "3b2", "3a2"])
    expect(unsettledReason(["a", "b"])).toBe("rewrites did not settle: a, b")
  })
  it("a deny ends the rounds at once", () => {
    const { outcome } = run(
      {
        guard: (p) => (p["x"] === 1 ? { value: deny("guard", "no x=1") } : {}),
        rewriter: (p) => (p["x"] === 1 ? {} : { proposal: { x: 1 } })
      },
      { x: 0 }
    )
    expect(outcome).toEqual({
      _tag: "Stopped",
      payload: { x: 1 },
      rounds: 2,
      value: deny("guard", "no x=1"),
      adopted: ["rewriter"]
    })
  })
  it("the stop check comes before settling: a deny with proposals is Stopped", () => {
    const { outcome } = run({ g: () => ({ value: deny("g", "no"), proposal: { x: 9 } }) }, { x: 0 })
    expect(outcome._tag).toBe("Stopped")
    expect(outcome.rounds).toBe(1)
  })
  it("maxRounds below 1 still runs one round", () => {
    expect(run({ a: () => ({ proposal: { x: 1 } }) }, { x: 0 }, 0).outcome).toMatchObject({
      _tag: "Unsettled",
      rounds: 1
    })
    expect(run({ a: () => ({}) }, { x: 0 }, -3).outcome).toMatchObject({ _tag: "Settled", rounds: 1 })
  })
  it("a maxRounds that is not a finite number (an embedder's NaN or Infinity) counts as 1: fighters still fail closed", () => {
    const fighters = {
      b: (p: JsonObject) => (p["x"] === 2 ? {} : { proposal: { x: 2 } }),
      a: (p: JsonObject) => (p["x"] === 1 ? {} : { proposal: { x: 1 } })
    }
    for (const maxRounds of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(run(fighters, { x: 0 }, maxRounds).outcome).toMatchObject({ _tag: "Unsettled", rounds: 1 })
    }
  })
  it("works for any payload and reducer (tool_result content with is_error OR)", () => {
    const outcome = settle<string, boolean>({
      initial: "key AKIA1",
      reducer: Reducer.make((a, b) => a || b, false),
      stop: () => false,
      maxRounds: 4,
      round: (content) => [
        { name: "redact", proposal: content.replace("AKIA1", "[redacted]"), value: false },
        { name: "flag", proposal: undefined, value: content.includes("AKIA") }
      ]
    })
    expect(outcome).toEqual({ _tag: "Settled", payload: "key [redacted]", rounds: 2, value: true, adopted: ["redact"] })
  })
})

describe("settleEffect", () => {
  class Boom extends Schema.TaggedError<Boom>()("Boom", { round: Schema.Number }) {}
  it("passes round numbers from 1 and propagates a round's failure", () => {
    const rounds: Array<number> = []
    const exit = Effect.runSync(
      Effect.result(
        settleEffect<JsonObject, Verdict, Boom, never>({
          initial: { x: 0 },
          reducer: VerdictReducer,
          stop: (v) => v.level === "deny",
          maxRounds: 4,
          round: (payload, round) => {
            rounds.push(round)
            return round === 2
              ? Effect.fail(new Boom({ round }))
              : Effect.succeed([{ name: "a", proposal: { x: Number(payload["x"]) + 1 }, value: none }])
          }
        })
      )
    )
    expect(rounds).toEqual([1, 2])
    expect(exit._tag).toBe("Failure")
  })
})
