import { describe, expect, it } from "vitest"
import { failuresOf } from "../src/replay/Actors.ts"
import { excerpt, excerpts } from "../src/Excerpts.ts"

/** How `test` and `replay` bound the texts they show: one helper, one form (Excerpts.ts). */

describe("excerpt", () => {
  it("a text within the bound, as it is; a longer one cut, with its length; from a later char, where", () => {
    expect(excerpt("short", 5)).toBe("short")
    expect(excerpt("abcdefgh", 5)).toBe("abcde… (8 chars)")
    expect(excerpt("abcdefgh", 5, 2)).toBe("…cdefg… (8 chars, from char 3)")
    expect(excerpt("abcdefgh", 6, 2)).toBe("…cdefgh (8 chars, from char 3)")
  })

  it("two texts are cut around where they first differ", () => {
    const a = `${"x".repeat(300)}a`
    const b = `${"x".repeat(300)}b`
    const [shownA, shownB] = excerpts(a, b, 100)
    expect(shownA).toBe(`…${"x".repeat(40)}a (301 chars, from char 261)`)
    expect(shownB).toBe(`…${"x".repeat(40)}b (301 chars, from char 261)`)
    expect(excerpts("same", "sam", 10)).toEqual(["same", "sam"])
  })

  it("a failure's cause in replay and test: cut as any other text", () => {
    const error = "e".repeat(250)
    const record = {
      rounds: [{ exchanges: [{ extension: "guard", status: "timed_out", latency_ms: 1, error: `timed_out ${error}` }] }]
    }
    expect(failuresOf(record)).toEqual([`guard did not answer (timed_out ${"e".repeat(190)}… (260 chars))`])
  })
})
