import { describe, expect, it } from "vitest"
import { combineKeep } from "../src/ContextKeep.ts"

describe("combineKeep", () => {
  it("no replies, or replies without keep, keep everything", () => {
    expect(combineKeep(3, [])).toEqual({ keep: [0, 1, 2], outOfRange: [] })
    expect(combineKeep(3, [{ name: "a", value: {} }])).toEqual({ keep: [0, 1, 2], outOfRange: [] })
  })
  it("intersects the kept sets; result ascending and unique", () => {
    const out = combineKeep(5, [
      { name: "a", value: { keep: [4, 0, 1, 1, 3] } },
      { name: "b", value: { keep: [3, 1, 4] } },
      { name: "c", value: {} }
    ])
    expect(out).toEqual({ keep: [1, 3, 4], outOfRange: [] })
  })
  it("an empty keep drops everything", () => {
    expect(combineKeep(3, [{ name: "a", value: { keep: [] } }]).keep).toEqual([])
  })
  it("ignores and reports out-of-range, negative and non-integer indices, by extension name", () => {
    const out = combineKeep(3, [
      { name: "z", value: { keep: [0, 7, 3, 7] } },
      { name: "a", value: { keep: [-1, 0, 1.5, 2] } }
    ])
    expect(out.keep).toEqual([0])
    expect(out.outOfRange).toEqual([
      { extension: "a", indices: [-1, 1.5] },
      { extension: "z", indices: [3, 7] }
    ])
  })
  it("elements that are not numbers are ignored and reported after the numbers, in the order sent; the rest counts", () => {
    const out = combineKeep(3, [{ name: "a", value: { keep: [2, "1", 0.5, null, 0, "1", true] } }])
    expect(out).toEqual({ keep: [0, 2], outOfRange: [{ extension: "a", indices: [0.5, "1", null, true] }] })
  })
  it("an extension whose indices are all out of range drops everything (it kept no real message)", () => {
    expect(combineKeep(2, [{ name: "a", value: { keep: [5] } }])).toEqual({
      keep: [],
      outOfRange: [{ extension: "a", indices: [5] }]
    })
  })
  it("zero messages", () => {
    expect(combineKeep(0, [{ name: "a", value: { keep: [0] } }])).toEqual({
      keep: [],
      outOfRange: [{ extension: "a", indices: [0] }]
    })
  })
})
