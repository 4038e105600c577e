import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import * as fc from "fast-check"
import { Framing, makeLineReader, type ReadLine } from "../src/index.ts"

/**
 * The synchronous reader the host attributes lines with must agree with effect's Ndjson decoder (the codec
 * everywhere else) on every input and every way of cutting it into reads.
 */

const enc = new TextEncoder()

/** What Ndjson.decode makes of these chunks: the values before its first failure, and that failure's reason. */
const viaNdjson = (chunks: ReadonlyArray<Uint8Array>, maxLineBytes: number) =>
  Effect.runSync(
    Effect.gen(function* () {
      const values: Array<unknown> = []
      const result = yield* Effect.result(
        Framing.decodeStream(Stream.fromArray(chunks), { maxLineBytes }).pipe(
          Stream.runForEach((v) => Effect.sync(() => void values.push(v)))
        )
      )
      return { values, reason: Result.isFailure(result) ? Framing.framingReason(result.failure) : undefined }
    })
  )

/** The same through the reader, read by read, in the same terms. */
const viaReader = (chunks: ReadonlyArray<Uint8Array>, maxLineBytes: number) => {
  const reader = makeLineReader({ maxLineBytes })
  const values: Array<unknown> = []
  for (const chunk of chunks) {
    const { lines, tooLong } = reader.read(chunk)
    for (const line of lines) {
      if (line._tag === "Invalid")
        return { values, reason: line.got === "invalid UTF-8" ? "InvalidUtf8" : "InvalidJson" }
      if (line._tag === "Blanks") return { values, reason: "Blanks" } // never: no bound given
      values.push(line.value)
    }
    if (tooLong) return { values, reason: "LineTooLarge" }
  }
  return { values, reason: undefined }
}

const line = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map((v) => enc.encode(JSON.stringify(v))),
  fc.constant(enc.encode("")), // blank
  fc.constant(enc.encode("{not json")),
  fc.constant(enc.encode(" ")), // only a space: not blank, invalid JSON
  fc.constant(Uint8Array.of(0x22, 0xff, 0x22)), // "\xff": not UTF-8
  fc.constant(enc.encode(`"${"x".repeat(80)}"`)) // longer than the small limit below
)
const terminator = fc.constantFrom("\n", "\r\n", "\r").map((t) => enc.encode(t))

const input = fc.tuple(fc.boolean(), fc.array(fc.tuple(line, terminator), { maxLength: 12 })).map(([bom, lines]) => {
  const parts = [bom ? Uint8Array.of(0xef, 0xbb, 0xbf) : new Uint8Array(0), ...lines.flat()]
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let offset = 0
  for (const p of parts) {
    all.set(p, offset)
    offset += p.length
  }
  return all
})

/** Cut `all` at the given points (a line split anywhere, many lines in one chunk). */
const cut = (all: Uint8Array, points: ReadonlyArray<number>): Array<Uint8Array> => {
  const sorted = [...new Set(points.map((p) => p % (all.length + 1)))].sort((a, b) => a - b)
  const chunks: Array<Uint8Array> = []
  let from = 0
  for (const p of sorted) {
    chunks.push(all.subarray(from, p))
    from = p
  }
  chunks.push(all.subarray(from))
  return chunks.filter((c) => c.length > 0)
}

describe("makeLineReader", () => {
  it("agrees with Ndjson.decode on every input and every cut (values, then the first failure's reason)", () => {
    fc.assert(
      fc.property(input, fc.array(fc.nat(), { maxLength: 10 }), fc.constantFrom(64, 1 << 20), (all, points, max) => {
        const chunks = cut(all, points)
        expect(viaReader(chunks, max)).toEqual(viaNdjson(chunks, max))
      }),
      { numRuns: 1000 }
    )
  })

  it("gives the lines of each read, in order, in that read", () => {
    const reader = makeLineReader({ maxLineBytes: 1024 })
    const json = (...values: ReadonlyArray<unknown>): ReadonlyArray<ReadLine> =>
      values.map((value) => ({ _tag: "Json", value }))
    expect(reader.read(enc.encode('{"a":1}\n{"b"'))).toEqual({ lines: json({ a: 1 }), tooLong: false })
    expect(reader.read(enc.encode(":2}\r"))).toEqual({ lines: json({ b: 2 }), tooLong: false })
    expect(reader.read(enc.encode("\n\n{}\n[]\n"))).toEqual({ lines: json({}, []), tooLong: false })
    expect(reader.read(enc.encode("nope\n"))).toEqual({
      lines: [{ _tag: "Invalid", got: "invalid JSON", bytes: 4 }],
      tooLong: false
    })
  })

  it("keeps each line's text when asked (the conformance check reports lines as written), and not otherwise", () => {
    const bytes = new TextEncoder().encode(`{"a": 1e999}\n  \n\n{"b":2}\n`)
    expect(makeLineReader({ maxLineBytes: 100, keepText: true }).read(bytes).lines).toEqual([
      { _tag: "Json", value: { a: Infinity }, text: `{"a": 1e999}` },
      { _tag: "Invalid", got: "invalid JSON", bytes: 2, text: "  " },
      { _tag: "Json", value: { b: 2 }, text: `{"b":2}` }
    ])
    expect(makeLineReader({ maxLineBytes: 100 }).read(bytes).lines).toEqual([
      { _tag: "Json", value: { a: Infinity } },
      { _tag: "Invalid", got: "invalid JSON", bytes: 2 },
      { _tag: "Json", value: { b: 2 } }
    ])
  })

  it("stops at the limit without keeping the rest", () => {
    const reader = makeLineReader({ maxLineBytes: 8 })
    expect(reader.read(enc.encode('"12345"\n"123'))).toEqual({
      lines: [{ _tag: "Json", value: "12345" }],
      tooLong: false
    })
    expect(reader.read(enc.encode('456789"\n'))).toEqual({ lines: [], tooLong: true })
    expect(reader.read(enc.encode("{}\n"))).toEqual({ lines: [], tooLong: true })
  })

  it("ignores up to maxBlankLines empty lines in a row, then gives one Blanks line and reads nothing more", () => {
    const reader = makeLineReader({ maxLineBytes: 64, maxBlankLines: 3 })
    // A trailing print() after each reply: one blank line each time, never counted up.
    for (let i = 0; i < 10; i++)
      expect(reader.read(enc.encode("{}\n\n"))).toEqual({ lines: [{ _tag: "Json", value: {} }], tooLong: false })
    // Any terminator counts (\r\n is one), across reads (the last print()'s line is the first of 3); a line with
    // content starts the count again.
    expect(reader.read(enc.encode("\r\r\n"))).toEqual({ lines: [], tooLong: false })
    expect(reader.read(enc.encode("1\n\n\n"))).toEqual({ lines: [{ _tag: "Json", value: 1 }], tooLong: false })
    expect(reader.read(enc.encode("\n\n{}\n"))).toEqual({ lines: [{ _tag: "Blanks", count: 4 }], tooLong: false })
    expect(reader.read(enc.encode("{}\n"))).toEqual({ lines: [], tooLong: false })
  })

  it("with no bound, blank lines are ignored however many", () => {
    const reader = makeLineReader({ maxLineBytes: 64 })
    expect(reader.read(enc.encode(`${"\n".repeat(100_000)}{}\n`))).toEqual({
      lines: [{ _tag: "Json", value: {} }],
      tooLong: false
    })
  })
})
