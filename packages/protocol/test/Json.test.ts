import { describe, expect, it } from "vitest"
import { canonicalJson, jsonEquals } from "../src/index.ts"

describe("canonicalJson", () => {
  it("keeps a `__proto__` key (JSON.parse makes it an own key; assigning it must not set a prototype)", () => {
    const value: unknown = JSON.parse(`{"b":1,"__proto__":{"rm":"-rf /"},"a":"x"}`)
    expect(canonicalJson(value)).toBe(`{"__proto__":{"rm":"-rf /"},"a":"x","b":1}`)
    expect(canonicalJson(JSON.parse(`{"__proto__":"rm -rf /"}`))).toBe(`{"__proto__":"rm -rf /"}`)
  })
  it("values that differ only in a `__proto__` key have different texts", () => {
    const a: unknown = JSON.parse(`{"__proto__":{"x":1}}`)
    expect(jsonEquals(a, {})).toBe(false)
    expect(canonicalJson(a)).not.toBe(canonicalJson({}))
  })
})
