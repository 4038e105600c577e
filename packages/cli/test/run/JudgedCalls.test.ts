import { describe, expect, it } from "vitest"
import * as JudgedCalls from "../../src/run/JudgedCalls.ts"

/** `abhed-ext run`'s decided calls, which hold the invoke_tool lines for them (docs/cli.md, input). */

const allowed = (i: number): JudgedCalls.Decided => ({
  callId: `c-${i}`,
  tool: "bash",
  proposed: { command: `ls ${i}` },
  settled: { command: `ls ${i}` },
  decision: "allow",
  line: i
})

describe("JudgedCalls", () => {
  it("args compare as JSON values: key order, 1e0 and 1, -0 and 0 are the same args", () => {
    const judged = JudgedCalls.make()
    judged.decided({ ...allowed(1), proposed: { a: 1, b: 0 }, settled: { a: 1, b: 0 }, decision: "deny" })
    expect(judged.judge(undefined, "bash", { b: -0, a: 1 })?.refusal).toContain("was denied")
    expect(judged.judge(undefined, "bash", { a: 1, b: 1 })).toBeUndefined()
  })

  it("an invoke no call holds is found out in constant time, whatever the calls decided", { timeout: 30_000 }, () => {
    // Walking every decision of the tool per invoke made 20 000 calls and 20 000 such invokes cost 65 s of CPU.
    const judged = JudgedCalls.make()
    for (let i = 0; i < 20_000; i++) judged.decided(allowed(i))
    for (let i = 0; i < 20_000; i++)
      expect(judged.judge(undefined, "bash", { command: `ls ${i}`, x: 1 })).toBeUndefined()
    expect(judged.judge(undefined, "bash", { command: "ls 7" })).toMatchObject({ callId: "c-7", refusal: undefined })
  })

  it("an invoke of a tool another extension provides now (or with another input_schema) is refused", () => {
    const judged = JudgedCalls.make()
    const tool = (extension: string, type: string) =>
      JudgedCalls.providerOf([{ extension, tool: { name: "bash", description: "", input_schema: { type } } }], "bash")
    judged.decided({ ...allowed(1), provider: tool("maker", "object") })
    expect(judged.judge(undefined, "bash", { command: "ls 1" }, tool("maker", "object"))?.refusal).toBeUndefined()
    for (const now of [tool("other", "object"), tool("maker", "string"), undefined]) {
      expect(judged.judge("c-1", "bash", { command: "ls 1" }, now)?.refusal).toContain(
        'is no longer the tool the tool_call "c-1" (line 1) was decided on'
      )
    }
  })

  it("an invoke after a reload (the set that decided the call is no longer in force) is refused, ask or allow", () => {
    const judged = JudgedCalls.make()
    judged.decided({ ...allowed(1), decision: "ask", generation: 0 })
    judged.decided({ ...allowed(2), generation: 0 })
    expect(judged.judge("c-1", "bash", { command: "ls 1" }, undefined, 0)?.refusal).toBeUndefined()
    for (const id of ["c-1", "c-2"]) {
      expect(judged.judge(id, "bash", { command: `ls ${id.slice(2)}` }, undefined, 1)?.refusal).toContain(
        `the config was reloaded since the tool_call "${id}" (line ${id.slice(2)}) was decided`
      )
    }
    // Decided again after the reload: it runs.
    judged.decided({
      ...allowed(3),
      callId: "c-1",
      proposed: { command: "ls 1" },
      settled: { command: "ls 1" },
      generation: 1
    })
    expect(judged.judge("c-1", "bash", { command: "ls 1" }, undefined, 1)?.refusal).toBeUndefined()
  })
})
