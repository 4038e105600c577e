import { isoTime } from "@abhed/host/IsoTime"
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"

describe("isoTime", () => {
  it("writes what Date.prototype.toISOString writes, for any time it can hold", () => {
    for (const t of [0, 999, 1000, 951_782_400_000, 1_764_626_400_123, Date.UTC(9999, 11, 31, 23, 59, 59, 999)])
      assert.strictEqual(isoTime(t), new Date(t).toISOString())
    // In and out of the cached second, and outside the years it makes itself (before 1970, after 9999).
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 - 2500 }), fc.integer({ min: 0, max: 2500 }), (t, step) => {
        assert.strictEqual(isoTime(t), new Date(t).toISOString())
        assert.strictEqual(isoTime(t + step), new Date(t + step).toISOString())
      }),
      { numRuns: 20_000 }
    )
    assert.strictEqual(isoTime(1_764_626_400_123.5), new Date(1_764_626_400_123.5).toISOString())
  })
})
