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

  it("a name that is not ^[A-Za-z0-9_-]{1,64}$ is rejected as invalid_name; the declarer's other tools stay", () => {
    // `__proto__` matches the pattern, but no JavaScript record can hold it as a key (it would set the prototype).
    const lookalikes = ["bash\u200b", "bash ", "b\u0430sh", "", "x".repeat(65), "a/b", "a.b", "caf\u00e9", "__proto__", "__PROTO__"]
    const out = combineTools(["bash"], [{ name: "a", value: { tools: [...lookalikes.map((n) => tool(n)), tool("ok-tool-1_x")] } }])
    expect(out.accepted.map((a) => a.tool.name)).toEqual(["ok-tool-1_x"])
    expect(out.rejected.map((r) => [r.name, r.reason])).toEqual(
      [...lookalikes].sort().map((n) => [n, "invalid_name"])
    )
    expect(combineTools([], [{ name: "a", value: { tools: [tool("x".repeat(64))] } }]).accepted).toHaveLength(1)
  })
  it("collisions with built-ins compare ignoring case", () => {
    const out = combineTools(["bash"], [
      { name: "a", value: { tools: [tool("BASH")] } },
      { name: "b", value: { tools: [tool("Bash"), tool("Read")] } }
    ])
    expect(out).toEqual({
      accepted: [{ extension: "b", tool: tool("Read") }],
      rejected: [
        { name: "BASH", extensions: ["a"], reason: "builtin" },
        { name: "Bash", extensions: ["b"], reason: "builtin" }
      ]
    })
  })
  it("collisions between extensions compare ignoring case: every spelling is rejected", () => {
    const out = combineTools([], [
      { name: "a", value: { tools: [tool("Grep")] } },
      { name: "b", value: { tools: [tool("grep"), tool("own")] } }
    ])
    expect(out.accepted.map((a) => a.tool.name)).toEqual(["own"])
    expect(out.rejected).toEqual([
      { name: "Grep", extensions: ["a"], reason: "duplicate" },
      { name: "grep", extensions: ["b"], reason: "duplicate" }
    ])
  })
})
