import { describe, expect, it } from "vitest"
import { ask, deny, fromToolCallReply, join, none, VerdictReducer } from "../src/Verdict.ts"

describe("Verdict", () => {
  it("constructors", () => {
    expect(none).toEqual({ level: "none", reasons: [] })
    expect(ask("a", "r")).toEqual({ level: "ask", reasons: [{ extension: "a", reason: "r" }] })
    expect(deny("a", "r")).toEqual({ level: "deny", reasons: [{ extension: "a", reason: "r" }] })
  })

  it("join keeps the max level and only the winning level's reasons", () => {
    expect(join(ask("a", "x"), deny("b", "y"))).toEqual(deny("b", "y"))
    expect(join(deny("b", "y"), ask("a", "x"))).toEqual(deny("b", "y"))
    expect(join(none, ask("a", "x"))).toEqual(ask("a", "x"))
  })

  it("join of equal levels merges reasons sorted by extension then reason, without duplicates", () => {
    const v = join(join(deny("z", "1"), deny("a", "2")), join(deny("a", "1"), deny("z", "1")))
    expect(v.reasons).toEqual([
      { extension: "a", reason: "1" },
      { extension: "a", reason: "2" },
      { extension: "z", reason: "1" }
    ])
  })

  it("sorts by code units, not locale", () => {
    // "B" (0x42) < "a" (0x61) in code units; localeCompare would put "a" first.
    expect(join(ask("a", "r"), ask("B", "r")).reasons.map((r) => r.extension)).toEqual(["B", "a"])
  })

  it("VerdictReducer folds with none as the identity", () => {
    expect(VerdictReducer.initialValue).toEqual(none)
    expect(VerdictReducer.combineAll([])).toEqual(none)
    expect(VerdictReducer.combineAll([ask("b", "q"), none, ask("a", "p")])).toEqual({
      level: "ask",
      reasons: [
        { extension: "a", reason: "p" },
        { extension: "b", reason: "q" }
      ]
    })
  })

  describe("fromToolCallReply", () => {
    it("no opinion", () => {
      expect(fromToolCallReply("g", {})).toEqual(none)
      expect(fromToolCallReply("g", { block: false, ask: false })).toEqual(none)
      expect(fromToolCallReply("g", { reason: "only a reason" })).toEqual(none)
      expect(fromToolCallReply("g", { args: { command: "ls" } })).toEqual(none)
    })
    it("block → deny, ask → ask, both → deny", () => {
      expect(fromToolCallReply("g", { block: true, reason: "no" })).toEqual(deny("g", "no"))
      expect(fromToolCallReply("g", { ask: true, reason: "sure?" })).toEqual(ask("g", "sure?"))
      expect(fromToolCallReply("g", { block: true, ask: true, reason: "no" })).toEqual(deny("g", "no"))
      expect(fromToolCallReply("g", { block: true, ask: false })).toEqual(deny("g", "blocked by g"))
    })
    it("default reasons name the extension (also for an empty reason)", () => {
      expect(fromToolCallReply("g", { block: true })).toEqual(deny("g", "blocked by g"))
      expect(fromToolCallReply("g", { ask: true, reason: "" })).toEqual(ask("g", "approval requested by g"))
    })
  })
})
