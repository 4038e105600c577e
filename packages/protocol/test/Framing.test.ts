import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import * as fc from "fast-check"
import { Framing } from "../src/index.ts"

const enc = new TextEncoder()
const bytes = (s: string) => enc.encode(s)
const chunks = (...parts: ReadonlyArray<string | Uint8Array>) =>
  Stream.fromArray(parts.map((p) => (typeof p === "string" ? bytes(p) : p)))

/** Runs a decoder; returns what it emitted before ending, and its failure if any. */
const decodeAll = <E>(stream: Stream.Stream<Uint8Array, E>, options?: Framing.DecodeOptions) =>
  Effect.gen(function* () {
    const values: Array<unknown> = []
    const result = yield* Effect.result(
      Framing.decodeStream(stream, options).pipe(Stream.runForEach((v) => Effect.sync(() => void values.push(v))))
    )
    const error: unknown = Result.isFailure(result) ? result.failure : undefined
    return { values, error }
  })

const reasonOf = (error: unknown) => Framing.framingReason(error)

describe("Framing.decodeStream", () => {
  it.effect("decodes lines split across chunks, anywhere, including inside a multi-byte character", () =>
    Effect.gen(function* () {
      const text = '{"a":"é→😀"}\n[1,2]\n'
      const all = bytes(text)
      // Every split point, so a line boundary or a UTF-8 sequence is cut at each position once.
      for (let cut = 1; cut < all.length; cut++) {
        const r = yield* decodeAll(chunks(all.subarray(0, cut), all.subarray(cut)))
        expect(r.error).toBeUndefined()
        expect(r.values).toEqual([{ a: "é→😀" }, [1, 2]])
      }
      const oneByteAtATime = yield* decodeAll(Stream.fromArray(Array.from(all, (b) => Uint8Array.of(b))))
      expect(oneByteAtATime.values).toEqual([{ a: "é→😀" }, [1, 2]])
    })
  )

  it.effect("accepts CRLF, LF and CR terminators, and a final unterminated line", () =>
    Effect.gen(function* () {
      const r = yield* decodeAll(chunks('{"a":1}\r\n{"b":2}\r', '\n{"c":3}\r{"d":4}\n{"e":5}'))
      expect(r.error).toBeUndefined()
      expect(r.values).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }, { d: 4 }, { e: 5 }])
    })
  )

  it.effect("skips bare blank lines (LF, CRLF, at start, between, at end)", () =>
    Effect.gen(function* () {
      const r = yield* decodeAll(chunks("\n\r\n{}\n\n", '\r\n\n{"x":1}\n\n'))
      expect(r.error).toBeUndefined()
      expect(r.values).toEqual([{}, { x: 1 }])
    })
  )

  it.effect("a whitespace-only line is not blank: it fails as InvalidJson (as documented)", () =>
    Effect.gen(function* () {
      const r = yield* decodeAll(chunks("{}\n  \n{}\n"))
      expect(r.values).toEqual([{}])
      expect(reasonOf(r.error)).toBe("InvalidJson")
    })
  )

  it.effect("a line that is not JSON fails with InvalidJson after the lines before it were emitted", () =>
    Effect.gen(function* () {
      const r = yield* decodeAll(chunks('{"ok":1}\nnot json\n{"never":1}\n'))
      expect(r.values).toEqual([{ ok: 1 }])
      assert.isTrue(Framing.isFramingError(r.error))
      expect(reasonOf(r.error)).toBe("InvalidJson")
    })
  )

  it.effect("invalid UTF-8 fails with InvalidUtf8", () =>
    Effect.gen(function* () {
      const bad = Uint8Array.of(0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a) // {"a":"\xff\xfe"}
      const r = yield* decodeAll(chunks("{}\n", bad, "{}\n"))
      expect(r.values).toEqual([{}])
      expect(reasonOf(r.error)).toBe("InvalidUtf8")
      // A truncated multi-byte sequence at the end of a line is invalid too.
      const truncated = yield* decodeAll(chunks(Uint8Array.of(0x22, 0xe2, 0x86, 0x22, 0x0a)))
      expect(reasonOf(truncated.error)).toBe("InvalidUtf8")
    })
  )

  it.effect("maxLineBytes counts UTF-8 bytes without the terminator: exactly the limit passes, one more fails", () =>
    Effect.gen(function* () {
      const ten = '"abcdefgh"' // 10 bytes
      const ok = yield* decodeAll(chunks(`${ten}\r\n`), { maxLineBytes: 10 })
      expect(ok).toEqual({ values: ["abcdefgh"], error: undefined })
      const tooLong = yield* decodeAll(chunks(`${ten} \n`), { maxLineBytes: 10 })
      expect(reasonOf(tooLong.error)).toBe("LineTooLarge")
      // "é" is 2 bytes: 8 characters, 11 bytes.
      const multiByte = yield* decodeAll(chunks('"abcdeé"\n'), { maxLineBytes: 8 })
      expect(reasonOf(multiByte.error)).toBe("LineTooLarge")
    })
  )

  it.effect("an over-long line fails with LineTooLarge as soon as the limit is passed, without reading the rest", () =>
    Effect.gen(function* () {
      const chunk = new Uint8Array(64 * 1024).fill(0x61) // no newline ever
      let pulled = 0
      const endless = Stream.fromEffectRepeat(
        Effect.sync(() => {
          pulled++
          return chunk
        })
      )
      const r = yield* decodeAll(Stream.concat(chunks('{"first":true}\n'), endless))
      expect(r.values).toEqual([{ first: true }])
      expect(reasonOf(r.error)).toBe("LineTooLarge")
      // 16 MiB / 64 KiB = 256 chunks fill the limit; the 257th passes it. Nothing more may be read.
      expect(pulled).toBe(Framing.DefaultMaxLineBytes / chunk.length + 1)
    })
  )

  it.effect("a small limit stops an endless line after the first chunk that passes it", () =>
    Effect.gen(function* () {
      let pulled = 0
      const endless = Stream.fromEffectRepeat(
        Effect.sync(() => {
          pulled++
          return bytes("xxxxxxxxxx")
        })
      )
      const r = yield* decodeAll(endless, { maxLineBytes: 25 })
      expect(reasonOf(r.error)).toBe("LineTooLarge")
      expect(pulled).toBe(3)
    })
  )

  it.effect(
    "a 64 MiB line fed in 64 KiB chunks decodes when maxLineBytes is raised above it",
    () =>
      Effect.gen(function* () {
        const size = 64 * 1024 * 1024
        const line = new Uint8Array(size + 1).fill(0x61) // "aaa…a" as a JSON string, then LF
        line[0] = 0x22
        line[size - 1] = 0x22
        line[size] = 0x0a
        const parts: Array<Uint8Array> = []
        for (let at = 0; at < line.length; at += 64 * 1024) parts.push(line.subarray(at, at + 64 * 1024))
        expect(parts.length).toBe(1025) // 1024 full chunks, then the LF alone
        const r = yield* decodeAll(Stream.fromArray(parts), { maxLineBytes: size + 1024 })
        expect(r.error).toBeUndefined()
        expect(r.values.length).toBe(1)
        const value = r.values[0]
        expect(typeof value === "string" ? value.length : value).toBe(size - 2)
        // And with the default limit, the same line is too large.
        const rejected = yield* decodeAll(Stream.fromArray(parts))
        expect(reasonOf(rejected.error)).toBe("LineTooLarge")
      }),
    60_000
  )
})

describe("Framing.encodeLine", () => {
  const countNewlines = (b: Uint8Array) => b.reduce((n, x) => n + (x === 0x0a || x === 0x0d ? 1 : 0), 0)

  it("writes exactly one line, even for strings with embedded newlines and unicode line separators", () => {
    const value = { content: "line 1\nline 2\r\nline 3\u2028\u2029", emoji: "😀", nul: "\u0000" }
    const out = Framing.encodeLine(value)
    expect(countNewlines(out)).toBe(1)
    expect(out[out.length - 1]).toBe(0x0a)
    expect(JSON.parse(new TextDecoder().decode(out))).toEqual(value)
  })

  it.effect("round-trips through decodeStream (property, unicode strings including lone surrogates)", () =>
    Effect.sync(() => {
      const text = fc.string({ unit: "binary", maxLength: 50 })
      const json = fc.oneof(fc.jsonValue(), fc.dictionary(text, text), text)
      fc.assert(
        fc.property(fc.array(json, { minLength: 1, maxLength: 5 }), (values) => {
          const lines = values.map(Framing.encodeLine)
          for (const line of lines) expect(countNewlines(line)).toBe(1)
          const decoded = Effect.runSync(Stream.runCollect(Framing.decodeStream(Stream.fromArray(lines))))
          // JSON itself normalizes -0 to 0; compare against what JSON can carry.
          expect(decoded).toEqual(values.map((v) => JSON.parse(JSON.stringify(v))))
        }),
        { numRuns: 1000 }
      )
    })
  )
})

describe("Framing.encodeStream", () => {
  it.effect("encodes values as NDJSON bytes that decode back", () =>
    Effect.gen(function* () {
      const values = [{ event: "session_start", session_id: "s" }, { content: "a\nb" }, [1, "é"], "x", 3, null]
      const out = yield* Stream.runCollect(Framing.encodeStream(Stream.fromArray(values)))
      const text = out.map((b) => new TextDecoder().decode(b)).join("")
      expect(text).toBe(values.map((v) => `${JSON.stringify(v)}\n`).join(""))
      const back = yield* Stream.runCollect(Framing.decodeStream(Stream.fromArray(out)))
      expect(back).toEqual(values)
    })
  )

  it.effect("fails with a framing error for a value JSON cannot represent", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Stream.runCollect(Framing.encodeStream(Stream.make(() => 1))))
      assert.isTrue(Framing.isFramingError(error))
    })
  )
})
