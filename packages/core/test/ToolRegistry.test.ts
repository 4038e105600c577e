import type { ToolDeclaration } from "@abhed/protocol"
import { describe, expect, it } from "vitest"
import { combineTools } from "../src/ToolRegistry.ts"

const tool = (name: string, description = ""): ToolDeclaration => ({ name, description, input_schema: {} })

describe("combineTools", () => {
  it("union, sorted by tool name", () => {
    const out = combineTools(
      [],
      [
        { name: "x", value: { tools: [tool("zeta"), tool("alpha")] } },
        { name: "y", value: { tools: [tool("mid")] } },
        { name: "z", value: {} }
      ]
    )
    expect(out.accepted.map((a) => [a.tool.name, a.extension])).toEqual([
      ["alpha", "x"],
      ["mid", "y"],
      ["zeta", "x"]
    ])
    expect(out.rejected).toEqual([])
  })
  it("a name declared by two extensions is rejected for both; their other tools stay", () => {
    const out = combineTools(
      [],
      [
        { name: "b", value: { tools: [tool("grep", "b's"), tool("own")] } },
        { name: "a", value: { tools: [tool("grep", "a's")] } }
      ]
    )
    expect(out.accepted.map((a) => a.tool.name)).toEqual(["own"])
    expect(out.rejected).toEqual([{ name: "grep", extensions: ["a", "b"], reason: "duplicate" }])
  })
  it("a name declared twice by one extension is rejected", () => {
    const out = combineTools([], [{ name: "a", value: { tools: [tool("t"), tool("t")] } }])
    expect(out).toEqual({ accepted: [], rejected: [{ name: "t", extensions: ["a"], reason: "duplicate" }] })
  })
  it("a built-in name is rejected (builtin wins over duplicate)", () => {
    const out = combineTools(
      ["bash", "read"],
      [
        { name: "a", value: { tools: [tool("bash")] } },
        { name: "b", value: { tools: [tool("read")] } },
        { name: "c", value: { tools: [tool("read")] } }
      ]
    )
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
    const lookalikes = [
      "bash\u200b",
      "bash ",
      "b\u0430sh",
      "",
      "x".repeat(65),
      "a/b",
      "a.b",
      "caf\u00e9",
      "__proto__",
      "__PROTO__"
    ]
    const out = combineTools(
      ["bash"],
      [{ name: "a", value: { tools: [...lookalikes.map((n) => tool(n)), tool("ok-tool-1_x")] } }]
    )
    expect(out.accepted.map((a) => a.tool.name)).toEqual(["ok-tool-1_x"])
    expect(out.rejected.map((r) => [r.name, r.reason])).toEqual([...lookalikes].sort().map((n) => [n, "invalid_name"]))
    expect(combineTools([], [{ name: "a", value: { tools: [tool("x".repeat(64))] } }]).accepted).toHaveLength(1)
  })
  it("collisions with built-ins compare ignoring case", () => {
    const out = combineTools(
      ["bash"],
      [
        { name: "a", value: { tools: [tool("BASH")] } },
        { name: "b", value: { tools: [tool("Bash"), tool("Read")] } }
      ]
    )
    expect(out).toEqual({
      accepted: [{ extension: "b", tool: tool("Read") }],
      rejected: [
        { name: "BASH", extensions: ["a"], reason: "builtin" },
        { name: "Bash", extensions: ["b"], reason: "builtin" }
      ]
    })
  })
  it("collisions between extensions compare ignoring case: every spelling is rejected", () => {
    const out = combineTools(
      [],
      [
        { name: "a", value: { tools: [tool("Grep")] } },
        { name: "b", value: { tools: [tool("grep"), tool("own")] } }
      ]
    )
    expect(out.accepted.map((a) => a.tool.name)).toEqual(["own"])
    expect(out.rejected).toEqual([
      { name: "Grep", extensions: ["a"], reason: "duplicate" },
      { name: "grep", extensions: ["b"], reason: "duplicate" }
    ])
  })
})

describe("combineTools at scale", () => {
  /** Case variants of one name: `aaaaaaaaaaaa`, `Aaaaaaaaaaaa`, `aAaaaaaaaaaa`, ... (`count` ≤ 4096). */
  const variants = (count: number): Array<string> =>
    Array.from({ length: count }, (_, i) =>
      [..."aaaaaaaaaaaa"].map((c, bit) => (((i >> bit) & 1) === 1 ? c.toUpperCase() : c)).join("")
    )

  /** Declarations whose `name` counts its reads: the work done per declaration, without a clock. */
  const counted = (names: ReadonlyArray<string>) => {
    let reads = 0
    const tools = names.map(
      (name): ToolDeclaration => ({
        get name() {
          reads++
          return name
        },
        description: "",
        input_schema: {}
      })
    )
    return { tools, reads: () => reads }
  }

  it("case variants of one name cost work linear in their number (one reply held N² name comparisons)", () => {
    const n = 4096
    const names = [...variants(n), ...Array.from({ length: n }, (_, i) => `own${i}`)]
    const { reads, tools } = counted(names)
    const out = combineTools([], [{ name: "x", value: { tools } }])
    expect(out.accepted).toHaveLength(n)
    expect(out.rejected).toHaveLength(n)
    expect(out.rejected.every((r) => r.reason === "duplicate" && r.extensions.length === 1)).toBe(true)
    // Sorting the accepted tools reads names n log n times; the old grouping read n² (16.7M) for the variants.
    expect(reads()).toBeLessThan(2 * n * Math.ceil(Math.log2(2 * n)) * 4)
  })

  it("case variants across two extensions and a built-in: each spelling rejected once, with its declarers", () => {
    const spellings = variants(512)
    const names = Array.from({ length: 2048 }, (_, i) => `${spellings[i % 512]}${i >> 9}`)
    const out = combineTools(
      ["aaaaaaaaaaaa0"],
      [
        { name: "b", value: { tools: names.map((name) => tool(name)) } },
        { name: "a", value: { tools: names.slice(0, 10).map((name) => tool(name)) } }
      ]
    )
    expect(out.accepted).toEqual([])
    expect(out.rejected).toHaveLength(2048)
    expect(out.rejected[0]).toEqual({ name: "AAAAAAAAAaaa0", extensions: ["b"], reason: "builtin" })
    expect(out.rejected.find((r) => r.name === names[1])).toEqual({
      name: names[1],
      extensions: ["a", "b"],
      reason: "builtin"
    })
    expect(out.rejected.find((r) => r.name === "aaaaaaaaaaaa1")).toEqual({
      name: "aaaaaaaaaaaa1",
      extensions: ["b"],
      reason: "duplicate"
    })
  })
})
