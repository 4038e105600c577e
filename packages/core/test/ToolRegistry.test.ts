import type { ToolDeclaration } from "@abhed/protocol"
import { describe, expect, it } from "vitest"
import { combineTools } from "../src/ToolRegistry.ts"

const tool = (name: string, description = ""): ToolDeclaration => ({ name, description, input_schema: {} })

describe("combineTools", () => {
  it("union, sorted by tool name", () => {
    const out = combineTools([], [
      { name: "x", value: { tools: [tool("zeta"), tool("alpha")] } },
      { name: "y", value: { tools: [tool("mid")] } },
      { name: "z", value: {} }
    ])
    expect(out.accepted.map((a) => [a.tool.name, a.extension])).toEqual([["alpha", "x"], ["mid", "y"], ["zeta", "x"]])
    expect(out.rejected).toEqual([])
  })
  it("a name declared by two extensions is rejected for both; their other tools stay", () => {
    const out = combineTools([], [
      { name: "b", value: { tools: [tool("grep", "b's"), tool("own")] } },
      { name: "a", value: { tools: [tool("grep", "a's")] } }
    ])
    expect(out.accepted.map((a) => a.tool.name)).toEqual(["own"])
    expect(out.rejected).toEqual([{ name: "grep", extensions: ["a", "b"], reason: "duplicate" }])
  })
  it("a name declared twice by one extension is rejected", () => {
    const out = combineTools([], [{ name: "a", value: { tools: [tool("t"), tool("t")] } }])
    expect(out).toEqual({ accepted: [], rejected: [{ name: "t", extensions: ["a"], reason: "duplicate" }] })
  })
  it("a built-in name is rejected (builtin wins over duplicate)", () => {
    const out = combineTools(["bash", "read"], [
      { name: "a", value: { tools: [tool("bash")] } },
      { name: "b", value: { tools: [tool("read")] } },
      { name: "c", value: { tools: [tool("read")] } }
    ])
    expect(out).toEqual({
      accepted: [],
      rejected: [
        { name: "bash", extensions: ["a"], reason: "builtin" },
        { name: "read", extensions: ["b", "c"], reason: "builtin" }
      ]
    })
  })
})
