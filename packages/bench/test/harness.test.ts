import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { interleave, interleaveBlocks, rotation } from "../src/Harness.ts"
import { makeLineSplitter } from "../src/LineSplitter.ts"
import type { Machine } from "../src/Report.ts"
import { document, latencyRows, row, toJson, toTable, verdict } from "../src/Report.ts"
import { percentile, ratio, summarize } from "../src/Stats.ts"

/** The harness's arithmetic and output shape. Nothing here times anything. */

const machine: Machine = {
  os: "Linux 6",
  arch: "x64",
  cpus: 2,
  cpu_model: "test cpu",
  memory_mib: 4096,
  node: "v24.0.0",
  load_avg_1m: 0.5,
  mode: "quick"
}

describe("percentile", () => {
  it("is nearest-rank over sorted samples", () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1) // 1..100
    expect(percentile(sorted, 50)).toBe(50)
    expect(percentile(sorted, 99)).toBe(99)
    expect(percentile(sorted, 100)).toBe(100)
    expect(percentile(sorted, 0)).toBe(1)
    expect(percentile([7], 99)).toBe(7)
    expect(percentile([1, 2, 3], 50)).toBe(2)
    expect(percentile([1, 2, 3, 4], 50)).toBe(2)
    expect(percentile([], 50)).toBeNaN()
  })

  it("is a sample, with p% of the samples at or below it and fewer than p% strictly below", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 1, max: 100 }),
        (xs, p) => {
          const sorted = [...xs].sort((a, b) => a - b)
          const v = percentile(sorted, p)
          const atOrBelow = sorted.filter((x) => x <= v).length
          const below = sorted.filter((x) => x < v).length
          return sorted.includes(v) && atOrBelow / sorted.length >= p / 100 && below / sorted.length < p / 100
        }
      ),
      { numRuns: 1000 }
    )
  })
})

describe("summarize", () => {
  it("sorts the samples itself and reports p50, p99, mean, min, max", () => {
    const s = summarize([5, 1, 4, 2, 3])
    expect(s).toEqual({ count: 5, p50: 3, p99: 5, mean: 3, min: 1, max: 5 })
  })

  it("has p50 ≤ p99 and min ≤ p50, p99 ≤ max", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1 }), (xs) => {
        const s = summarize(xs)
        return s.min <= s.p50 && s.p50 <= s.p99 && s.p99 <= s.max
      }),
      { numRuns: 1000 }
    )
  })
})

describe("ratio and budgets", () => {
  it("is host/raw, null without a usable baseline", () => {
    expect(ratio(3, 2)).toBe(1.5)
    expect(ratio(1, 0)).toBeNull()
    expect(ratio(Number.NaN, 1)).toBeNull()
    expect(row({ name: "n", metric: "p50", host: 6, raw: 4, budget: 1.5, unit: "ms" }).ratio).toBe(1.5)
  })

  it("is within budget at the budget and over it above", () => {
    expect(verdict(row({ name: "n", metric: "p50", host: 6, raw: 4, budget: 1.5, unit: "ms" }))).toBe("ok")
    expect(verdict(row({ name: "n", metric: "p50", host: 6.1, raw: 4, budget: 1.5, unit: "ms" }))).toBe("OVER")
    expect(verdict(row({ name: "n", metric: "p50", host: 6, raw: 0, budget: 1.5, unit: "ms" }))).toBe("OVER")
    expect(verdict(row({ name: "n", metric: "p50", host: 60, raw: 4, budget: null, unit: "ms" }))).toBe("-")
  })

  it("a latency comparison is a p50 row judged against the budget and a p99 row with none", () => {
    const host = summarize([1, 2, 3, 4, 100])
    const raw = summarize([1, 1, 2, 2, 50])
    expect(latencyRows("n", host, raw, 1.2)).toEqual([
      row({ name: "n", metric: "p50", host: 3, raw: 2, budget: 1.2, unit: "ms" }),
      row({ name: "n", metric: "p99", host: 100, raw: 50, budget: null, unit: "ms" })
    ])
  })
})

describe("output", () => {
  const rows = [
    row({ name: "1. sequential tool_call, 1 no-op ext", metric: "p50", host: 0.3, raw: 0.2, budget: 1.5, unit: "ms" }),
    row({ name: "6. spawn per event", metric: "p50", host: 0.25, raw: 25, budget: null, unit: "ms" }),
    row({ name: "5. memory", metric: "open fds", host: Number.NaN, raw: Number.NaN, budget: 1.1, unit: "fds" })
  ]

  it("--json is exactly {machine, scenarios: [{name, metric, host, raw, ratio, budget, unit}]}", () => {
    const parsed: unknown = JSON.parse(toJson(document(machine, rows)))
    expect(parsed).toEqual({
      machine,
      scenarios: [
        {
          name: "1. sequential tool_call, 1 no-op ext",
          metric: "p50",
          host: 0.3,
          raw: 0.2,
          ratio: 1.5,
          budget: 1.5,
          unit: "ms"
        },
        { name: "6. spawn per event", metric: "p50", host: 0.25, raw: 25, ratio: 0.01, budget: null, unit: "ms" },
        { name: "5. memory", metric: "open fds", host: null, raw: null, ratio: null, budget: 1.1, unit: "fds" }
      ]
    })
    for (const s of (parsed as { scenarios: Array<object> }).scenarios) {
      // shape checked by toEqual above
      expect(Object.keys(s)).toEqual(["name", "metric", "host", "raw", "ratio", "budget", "unit"])
    }
  })

  it("the table has a line per row with its verdict", () => {
    const lines = toTable(document(machine, rows)).split("\n")
    expect(lines[0]).toContain("2 × test cpu")
    const body = lines.slice(4)
    expect(body).toHaveLength(3)
    expect(body[0]).toMatch(/1\. sequential tool_call, 1 no-op ext\s+p50\s+0\.300\s+0\.200\s+1\.500\s+≤ 1\.5\s+ok\s+ms/)
    expect(body[1]).toMatch(/0\.010\s+-\s+-\s+ms$/)
    expect(body[2]).toMatch(/n\/a\s+n\/a\s+n\/a\s+≤ 1\.1\s+OVER/)
  })
})

/** Sides that note the order they run in and return a counter: which iteration each sample came from. */
const recordingSides = () => {
  const order: Array<string> = []
  let n = 0
  const side = (name: string) => () => {
    order.push(name)
    n += 1
    return Promise.resolve(n)
  }
  return { order, side }
}

describe("interleaving", () => {
  it("rotates which side goes first, every side once per iteration", () => {
    expect(rotation(["host", "raw"], 0)).toEqual(["host", "raw"])
    expect(rotation(["host", "raw"], 1)).toEqual(["raw", "host"])
    expect(rotation(["a", "b", "c"], 4)).toEqual(["b", "c", "a"])
  })

  it("runs warmup + iterations of every side, alternating, and keeps only the measured iterations", async () => {
    const { order, side } = recordingSides()
    const samples = await interleave({ host: side("host"), raw: side("raw") }, { warmup: 1, iterations: 2 })
    expect(order).toEqual(["host", "raw", "raw", "host", "host", "raw"])
    expect(samples).toEqual({ host: [4, 5], raw: [3, 6] })
  })

  it("in blocks: each side runs a block in a row, rotating which goes first, the warmup's iterations thrown away", async () => {
    const { order, side } = recordingSides()
    const samples = await interleaveBlocks({ on: side("on"), off: side("off") }, { warmup: 2, iterations: 4 }, 2)
    // Three rounds of two blocks of two: the first round is the warmup.
    expect(order).toEqual(["on", "on", "off", "off", "off", "off", "on", "on", "on", "on", "off", "off"])
    expect(samples).toEqual({ on: [7, 8, 9, 10], off: [5, 6, 11, 12] })
  })
})

describe("line splitter", () => {
  it("gives the same lines however the bytes are chunked, skipping blank lines", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: "grapheme" }).map((s) => s.replaceAll("\n", " ")),
          { maxLength: 10 }
        ),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 20 }),
        (lines, cuts) => {
          const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(""))
          const splitter = makeLineSplitter()
          const out: Array<string> = []
          let at = 0
          for (let i = 0; at < bytes.length; i++) {
            const next = Math.min(bytes.length, at + (cuts[i % cuts.length] ?? 1))
            out.push(...splitter.push(bytes.subarray(at, next)))
            at = next
          }
          expect(out).toEqual(lines.filter((l) => l.trim() !== ""))
        }
      ),
      { numRuns: 1000 }
    )
  })
})
