import { describe, expect, it } from "vitest"
import { FailedTextMax } from "@abhed/protocol"
import { failedText } from "../src/dispatch/Exchange.ts"

/** A `failed` reply's text as the host repeats it (the on_failure reason, the warning): docs/protocol.md. */

describe("failedText", () => {
  it("one printable line, cut to its bound", () => {
    expect(failedText("  parse error\u001b[2J\n")).toBe("parse error\\x1b[2J")
    expect(failedText("   ")).toBe("no reason given")
    expect(failedText("x".repeat(FailedTextMax))).toBe("x".repeat(FailedTextMax))
    expect(failedText("x".repeat(FailedTextMax + 1))).toBe(`${"x".repeat(FailedTextMax)}…`)
  })

  it("the cut never leaves half of a surrogate pair", () => {
    const out = failedText(`${"a".repeat(FailedTextMax - 1)}😀b`)
    expect(out).toBe(`${"a".repeat(FailedTextMax - 1)}…`)
    expect(out.isWellFormed()).toBe(true)
  })

  it("megabytes of text to escape: the same bounded line, the escapes of its head only", () => {
    const out = failedText("\u202e".repeat(1 << 20))
    expect(out).toBe(`${"\\u202e".repeat(FailedTextMax / 6)}${"\\u202e".slice(0, FailedTextMax % 6)}…`)
  })
})
