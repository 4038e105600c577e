import type { ReadLine } from "@abhed/protocol"
import { describe, expect, it } from "vitest"
import { decode, outOfStep } from "../src/Transport.ts"

const json = (value: unknown): ReadLine => ({ _tag: "Json", value })
const due = { event: "tool_call", id: "7" } as const

describe("Transport.outOfStep (attribution of one read's lines)", () => {
  it("one JSON line while a request is due is its reply (with its id, or none when ids are optional)", () => {
    expect(outOfStep("x", [json({ id: "7" })], due, true)).toBeUndefined()
    expect(outOfStep("x", [json({})], due, false)).toBeUndefined()
  })

  it("the reader's Blanks line (always its read's last) kills, even after the reply", () => {
    const error = outOfStep("x", [json({ id: "7" }), { _tag: "Blanks", count: 1001 }], due, false)
    expect(error?._tag).toBe("UnsolicitedOutput")
    expect(error !== undefined && "line" in error ? error.line : "").toBe("more than 1000 blank lines in a row")
  })

  it("a line with nothing due, or more lines than replies due, kills naming the stray (not the reply)", () => {
    const nothingDue = outOfStep("x", [json({ hello: "there" })], undefined, false)
    expect(nothingDue !== undefined && "line" in nothingDue ? nothingDue.line : "").toBe('{"<5 chars>":"<5 chars>"}')
    const two = outOfStep("x", [json({ id: "7" }), json({ id: "8" })], due, false)
    expect(two !== undefined && "line" in two ? two.line : "").toBe('reply to id "8" while "7" was in flight')
  })

  it("another id, no id when ids are required, and a line that is not JSON are each a death", () => {
    expect(outOfStep("x", [json({ id: "8" })], due, false)?._tag).toBe("UnsolicitedOutput")
    expect(outOfStep("x", [json({})], due, true)?._tag).toBe("MalformedReply")
    expect(outOfStep("x", [{ _tag: "Invalid", got: "invalid JSON", bytes: 3 }], due, false)?._tag).toBe(
      "MalformedReply"
    )
  })
})

describe("Transport.decode", () => {
  it("a reply that does not fit its event fails with what was wrong; one that does succeeds", () => {
    expect(decode("tool_call", { block: "yes" })._tag).toBe("Failure")
    expect(decode("tool_call", { block: true })._tag).toBe("Success")
  })
})
