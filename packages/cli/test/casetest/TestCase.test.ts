import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { decodeCase } from "../../src/casetest/TestCase.ts"

const problem = (text: string) => {
  const decoded = decodeCase(text)
  return Result.isFailure(decoded) ? decoded.failure : undefined
}

describe("decodeCase: a malformed case says what is wrong where, in words", () => {
  it("names each field by its path, with what it must be and what it got", () => {
    expect(problem('{"call":{"tool":"rm"},"expect":"deny"}')).toBe("call.args: missing")
    expect(problem('{"call":{"tool":"rm","args":"x"},"expect":"deny"}')).toBe('call.args: must be an object, got "x"')
    expect(problem('{"call":{"tool":"x","args":{}},"expect":"deny","by":["a",2]}')).toBe(
      "by[1]: must be a string, got 2"
    )
    expect(problem('{"tool_result":{"tool":"x","args":{},"content":"c"},"by":3}')).toBe(
      "by: must be an extension's name or a list of names, got 3"
    )
  })

  it("a misspelt nested field: the likely meaning", () => {
    expect(problem('{"call":{"tol":"rm","args":{}},"expect":"deny"}')).toBe(
      'call.tol: unknown key; did you mean "tool"?; call.tool: missing'
    )
  })
})
