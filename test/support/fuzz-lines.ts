import * as fc from "fast-check"

/**
 * Lines for fuzzing (issue 25): random bytes, and structure-aware mutations of valid lines (truncation, duplication,
 * type swaps, huge and deep values, NUL, lone surrogates, invalid UTF-8). A line never holds a line terminator
 * (`\n`, `\r`): it is one line.
 */

const encoder = new TextEncoder()

const oneLine = (bytes: Uint8Array): Uint8Array => {
  const out = bytes.filter((b) => b !== 0x0a && b !== 0x0d)
  return out.length > 0 ? out : encoder.encode("x")
}

const text = (s: string) => encoder.encode(s)

const valueArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "true",
    "false",
    "null",
    "0",
    "-1",
    "2.5",
    "1e999",
    "-1e999",
    '""',
    '"yes"',
    "[]",
    "{}",
    "[0,1,2]",
    '{"a":1}'
  ),
  fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)),
  fc.integer({ min: 1, max: 400 }).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
  fc.integer({ min: 1, max: 300 }).map((n) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`),
  fc.integer({ min: 1000, max: 200_000 }).map((n) => JSON.stringify("x".repeat(n))),
  fc.constantFrom('"\\u0000"', '"a\\u0000b"', '"\\ud800"', '"\\udfff x"', '"\\ud83d"', '"é"')
)

type Mutation = (line: string) => fc.Arbitrary<Uint8Array>

/** Where a value starts in the line (after a ":" or "[" or ","), for swapping it. */
const valueStarts = (line: string): ReadonlyArray<number> => [...line.matchAll(/[:[,]/g)].map((m) => (m.index ?? 0) + 1)

/** The end of the JSON value starting at `at` (a best effort: strings, and brackets counted). */
const valueEnd = (line: string, at: number): number => {
  let depth = 0
  let inString = false
  for (let i = at; i < line.length; i++) {
    const c = line[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === '"') {
        inString = false
        if (depth === 0) return i + 1
      }
      continue
    }
    if (c === '"') inString = true
    else if (c === "[" || c === "{") depth++
    else if (c === "]" || c === "}") {
      if (depth === 0) return i
      depth--
      if (depth === 0) return i + 1
    } else if (c === "," && depth === 0) return i
  }
  return line.length
}

const mutations: ReadonlyArray<Mutation> = [
  // truncation
  (line) => fc.integer({ min: 1, max: Math.max(1, line.length - 1) }).map((n) => text(line.slice(0, n))),
  // duplication: the whole line twice, or one member twice
  (line) => fc.constant(text(line + line)),
  (line) =>
    fc.constant(
      text(
        line.replace(
          /^\{("[^"]+":[^,}]+),?/,
          (all, member: string) => `{${member},${member}${all.endsWith(",") ? "," : ""}`
        )
      )
    ),
  // a value swapped for another type, or a huge or deep one
  (line) => {
    const starts = valueStarts(line)
    return fc
      .tuple(fc.constantFrom(...(starts.length > 0 ? starts : [0])), valueArb)
      .map(([at, value]) => text(line.slice(0, at) + value + line.slice(valueEnd(line, at))))
  },
  // a raw NUL byte, invalid UTF-8, or the UTF-8 of a lone surrogate, inserted anywhere
  (line) =>
    fc
      .tuple(
        fc.integer({ min: 0, max: line.length }),
        fc.constantFrom([0x00], [0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x80, 0xa8])
      )
      .map(([at, bytes]) => {
        const before = text(line.slice(0, at))
        const after = text(line.slice(at))
        return new Uint8Array([...before, ...bytes, ...after])
      }),
  // the object wrapped: in an array, in a string, or the line's top level replaced
  (line) => fc.constantFrom(text(`[${line}]`), text(JSON.stringify(line)), text(`  ${line}  `), text(" ")),
  // an unknown key, or a known key of another event
  (line) =>
    fc
      .tuple(
        fc.constantFrom("allow", "keep", "content", "system", "__proto__", "constructor", "tools", "cancel"),
        valueArb
      )
      .map(([key, value]) => text(line.replace(/^\{/, `{"${key}":${value},`)))
]

/** A mutation of one of `valid`, or random bytes: one line. */
export const fuzzLine = (valid: ReadonlyArray<string>): fc.Arbitrary<Uint8Array> =>
  fc
    .oneof(
      { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }) },
      {
        weight: 6,
        arbitrary: fc.constantFrom(...valid).chain((line) => fc.constantFrom(...mutations).chain((m) => m(line)))
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(...valid).chain((line) =>
          fc
            .constantFrom(...mutations)
            .chain((m) => m(line))
            .chain((once) => fc.constantFrom(...mutations).chain((m) => m(new TextDecoder().decode(once))))
        )
      }
    )
    .map(oneLine)
