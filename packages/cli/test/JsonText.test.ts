import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { jsonLine, jsonText } from "../src/JsonText.ts"

/** JSON as the CLI prints it: the same value, nothing in its bytes a terminal would obey or a reader split on. */

const Deceiving = /[\u0080-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/

describe("jsonText", () => {
  it("escapes C1 controls, bidirectional and invisible characters, and line separators; the value is unchanged", () => {
    const value = { reason: "ok\u009b2J\u202eevil\u2066\u200b\ufeff\u0085\u2028\u2029\u061c", n: 1 }
    const line = jsonLine(value)
    expect(line).not.toMatch(Deceiving)
    expect(line).toContain("\\u009b")
    expect(line).toContain("\\u202e")
    expect(JSON.parse(line)).toEqual(value)
  })

  it("any JSON value: the same value read back, none of those characters left, nothing else changed", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.array(fc.constantFrom("\u009b", "\u202e", "\u2028", "\u200f", "\ufeff")),
        (v, cs) => {
          const value = { v, s: cs.join("x") }
          const text = JSON.stringify(value)
          const printed = jsonText(text)
          expect(printed).not.toMatch(Deceiving)
          expect(JSON.parse(printed)).toEqual(JSON.parse(text))
        }
      )
    )
    // Text without any of them is left as it is, byte for byte.
    expect(jsonText('{"a":"é 日本 \\u001b"}')).toBe('{"a":"é 日本 \\u001b"}')
  })
})
