import { describe, expect, it } from "vitest"
import { combineSystem } from "../src/SystemPrompt.ts"

describe("combineSystem", () => {
  it("appends in name order, separated by a blank line", () => {
    expect(
      combineSystem("base", [
        { name: "b", value: { system: "B" } },
        { name: "a", value: { system: "A" } }
      ])
    ).toBe("base\n\nA\n\nB")
  })
  it("no leading separator when the system text is empty", () => {
    expect(
      combineSystem("", [
        { name: "a", value: { system: "A" } },
        { name: "b", value: { system: "B" } }
      ])
    ).toBe("A\n\nB")
  })
  it("skips empty and absent appends", () => {
    expect(
      combineSystem("base", [
        { name: "a", value: { system: "" } },
        { name: "b", value: {} }
      ])
    ).toBe("base")
    expect(combineSystem("", [])).toBe("")
  })
})
