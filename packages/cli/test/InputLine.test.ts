import { describe, expect, it } from "vitest"
import { Result } from "effect"
import { decodeInputLine } from "../src/InputLine.ts"

const error = (text: string) => {
  const r = decodeInputLine(text)
  return Result.isFailure(r) ? r.failure : undefined
}

describe("decodeInputLine", () => {
  it("accepts wire requests with or without session_id and call_id", () => {
    expect(Result.isSuccess(decodeInputLine(`{"event":"tool_call","tool":"bash","args":{"command":"ls"}}`))).toBe(true)
    expect(
      Result.isSuccess(
        decodeInputLine(`{"event":"tool_call","session_id":"s","call_id":"c","tool":"bash","args":{},"round":2}`)
      )
    ).toBe(true)
    expect(Result.isSuccess(decodeInputLine(`{"event":"list_tools"}`))).toBe(true)
  })

  it("a tool_result may leave out args (its call has them); a tool_call may not", () => {
    expect(decodeInputLine(`{"event":"tool_result","tool":"bash","content":"c","is_error":false}`)).toEqual(
      Result.succeed({ event: "tool_result", tool: "bash", content: "c", is_error: false })
    )
    expect(error(`{"event":"tool_call","tool":"bash"}`)).toMatch(/^tool_call: .*args/)
    expect(error(`{"event":"tool_result","tool":"bash","args":[],"content":"c","is_error":false}`)).toMatch(
      /^tool_result: .*args/
    )
  })

  it("names what is wrong", () => {
    expect(error("{nope")).toMatch(/^invalid JSON/)
    expect(error("[1]")).toMatch(/JSON object/)
    expect(error(`{"tool":"x"}`)).toMatch(/missing "event"/)
    expect(error(`{"event":"tool_calls"}`)).toMatch(/unknown event "tool_calls"; expected one of tool_call/)
    expect(error(`{"event":"tool_call","tool":3,"args":{}}`)).toMatch(/^tool_call: .*tool/)
    expect(error(`{"event":"tool_result","tool":"x","args":{},"content":"c"}`)).toMatch(/is_error/)
    expect(error(`{"event":"context","messages":{}}`)).toMatch(/messages/)
  })

  it("says what is wrong where, in words: each field by its path, a misspelt event with its likely meaning", () => {
    expect(error(`{"event":"tool_call","tool":"rm"}`)).toBe("tool_call: args: missing")
    expect(error(`{"event":"tool_call","tool":"rm","args":"x"}`)).toBe('tool_call: args: must be an object, got "x"')
    expect(error(`{"event":"tool_result","tool":"x","content":3}`)).toBe(
      "tool_result: content: must be a string, got 3; is_error: missing"
    )
    expect(error(`{"event":"toolcall","tool":"rm","args":{}}`)).toMatch(/; did you mean "tool_call"\?$/)
    expect(error(`[{"event":"tool_call"}]`)).toBe(
      'expected a JSON object with an "event" field, got an array (one request per line, not a list of them)'
    )
  })
})
