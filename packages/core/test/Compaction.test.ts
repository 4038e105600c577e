import { describe, expect, it } from "vitest"
import { combineCompact } from "../src/Compaction.ts"

describe("combineCompact", () => {
  it("no opinion → the agent's own summary", () => {
    expect(combineCompact([])).toEqual({ cancel: false, cancelledBy: [], summary: null })
    expect(combineCompact([{ name: "a", value: { cancel: false, summary: "" } }])).toEqual({
      cancel: false,
      cancelledBy: [],
      summary: null
    })
  })
  it("summaries joined in name order", () => {
    expect(
      combineCompact([
        { name: "b", value: { summary: "B" } },
        { name: "a", value: { summary: "A" } }
      ])
    ).toEqual({
      cancel: false,
      cancelledBy: [],
      summary: "A\n\nB"
    })
  })
  it("any cancel wins over summaries; cancellers sorted", () => {
    expect(
      combineCompact([
        { name: "c", value: { cancel: true } },
        { name: "a", value: { summary: "A" } },
        { name: "b", value: { cancel: true, summary: "B" } }
      ])
    ).toEqual({ cancel: true, cancelledBy: ["b", "c"], summary: null })
  })
})
