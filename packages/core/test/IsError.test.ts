import { describe, expect, it } from "vitest"
import { combineIsError, IsErrorReducer } from "../src/IsError.ts"

describe("IsError", () => {
  it("an extension may raise is_error", () => {
    expect(
      combineIsError(false, [
        { name: "a", value: {} },
        { name: "b", value: { is_error: true } }
      ])
    ).toBe(true)
  })
  it("an extension cannot lower is_error", () => {
    expect(combineIsError(true, [{ name: "a", value: { is_error: false } }])).toBe(true)
  })
  it("no opinion keeps the original", () => {
    expect(combineIsError(false, [])).toBe(false)
    expect(
      combineIsError(false, [
        { name: "a", value: { is_error: false } },
        { name: "b", value: { content: "x" } }
      ])
    ).toBe(false)
    expect(combineIsError(true, [])).toBe(true)
  })
  it("reducer is OR with false as identity", () => {
    expect(IsErrorReducer.initialValue).toBe(false)
    expect(IsErrorReducer.combine(false, true)).toBe(true)
    expect(IsErrorReducer.combine(true, false)).toBe(true)
  })
})
