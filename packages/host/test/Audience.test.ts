import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import type { AuditExchange } from "../src/AuditLog.ts"
import { mergeByName } from "../src/Audience.ts"

const entry = (extension: string): AuditExchange => ({ extension, status: "replied", latency_ms: 0 })
const byName = (a: AuditExchange, b: AuditExchange) =>
  a.extension < b.extension ? -1 : a.extension > b.extension ? 1 : 0

describe("mergeByName", () => {
  it("of two name-ordered lists of distinct names is their union in name order", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 3 }), { maxLength: 10 }),
        fc.array(fc.boolean(), { maxLength: 10 }),
        (names, sides) => {
          const all = names.map(entry).sort(byName)
          const a = all.filter((_, i) => sides[i] === true)
          const b = all.filter((_, i) => sides[i] !== true)
          expect(mergeByName(a, b)).toEqual(all)
          expect(mergeByName(b, a)).toEqual(all)
        }
      ),
      { numRuns: 1000 }
    )
  })
})
