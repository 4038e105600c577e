import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as StderrTail from "../src/StderrTail.ts"

/** The stderr keeper against a whole-input reference model, for every way of cutting the input into chunks. */

const byte = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(0x0a, 0x0d) },
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) }
)
const input = fc.record({
  bytes: fc.array(byte, { maxLength: 300 }).map((a) => Uint8Array.from(a)),
  cuts: fc.array(fc.nat({ max: 300 }), { maxLength: 12 }),
  tailBytes: fc.integer({ min: 1, max: 64 }),
  maxLineBytes: fc.integer({ min: 1, max: 24 })
})

const chunksOf = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const points = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b)
  const out: Array<Uint8Array> = []
  let start = 0
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(start, p))
    start = p
  }
  return out
}

const decode = (bytes: Uint8Array) => new TextDecoder("utf-8", { fatal: false }).decode(bytes)

const referenceLines = (bytes: Uint8Array, maxLineBytes: number): Array<string> => {
  const lines: Array<Array<number>> = [[]]
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0
    if (b === 0x0a && i > 0 && bytes[i - 1] === 0x0d) continue // CRLF is one terminator
    if (b === 0x0a || b === 0x0d) lines.push([])
    else lines[lines.length - 1]?.push(b)
  }
  return lines.flatMap((line) => {
    const pieces: Array<string> = []
    for (let at = 0; at < line.length; at += maxLineBytes) {
      pieces.push(decode(Uint8Array.from(line.slice(at, at + maxLineBytes))))
    }
    return pieces
  })
}

const referenceTail = (bytes: Uint8Array, tailBytes: number): string => {
  const last = bytes.subarray(Math.max(0, bytes.length - tailBytes))
  let skip = 0
  while (skip < last.length && skip < 3 && ((last[skip] ?? 0) & 0xc0) === 0x80) skip++
  return decode(last.subarray(skip))
}

describe("StderrTail", () => {
  it("logs the same lines and keeps the same tail however the input is chunked", () => {
    fc.assert(
      fc.property(input, ({ bytes, cuts, maxLineBytes, tailBytes }) => {
        const tail = StderrTail.make({ tailBytes, maxLineBytes })
        const lines = chunksOf(bytes, cuts).flatMap((chunk) => tail.push(chunk))
        lines.push(...tail.flush())
        expect(lines).toEqual(referenceLines(bytes, maxLineBytes))
        expect(tail.tail()).toBe(referenceTail(bytes, tailBytes))
      }),
      { numRuns: 1000 }
    )
  })

  it("keeps at most 64 KiB by default, the most recent bytes", () => {
    const tail = StderrTail.make()
    const line = new TextEncoder().encode(`${"e".repeat(1023)}\n`)
    for (let i = 0; i < 2000; i++) tail.push(line)
    tail.push(new TextEncoder().encode("last line\n"))
    const kept = tail.tail()
    expect(Buffer.byteLength(kept)).toBe(64 * 1024)
    expect(kept.endsWith("last line\n")).toBe(true)
  })

  it("cuts an endless line into bounded pieces instead of buffering it", () => {
    const tail = StderrTail.make({ maxLineBytes: 8 })
    const pieces = tail.push(new TextEncoder().encode("a".repeat(20)))
    expect(pieces).toEqual(["aaaaaaaa", "aaaaaaaa"])
    expect(tail.flush()).toEqual(["aaaa"])
  })
})
