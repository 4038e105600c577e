import { describe, expect, it } from "vitest"
import * as InvokeTool from "../../src/events/InvokeTool.ts"
import { answerOf, failedOf } from "./arbitraries.ts"

describe("InvokeTool rule", () => {
  it("the owner's result, is_error only when it says so; a missing result is null", () => {
    expect(InvokeTool.finish(answerOf("o", { result: { n: 1 }, is_error: true }), "").outcome).toEqual({
      _tag: "ok",
      result: { n: 1 },
      is_error: true
    })
    expect(InvokeTool.finish(answerOf("o", {}), "").outcome).toEqual({ _tag: "ok", result: null, is_error: false })
  })

  it("an owner that failed gives no result, only why", () => {
    expect(InvokeTool.finish(failedOf("o", "deny"), "it exited").outcome).toEqual({
      _tag: "failed",
      cause: "it exited"
    })
  })

  it("refused: an error result the model can read", () => {
    expect(InvokeTool.refused("args: too deep")).toEqual({
      outcome: { result: "[withheld: args: too deep]", is_error: true },
      notes: ["not sent to any extension: args: too deep"]
    })
  })
})
