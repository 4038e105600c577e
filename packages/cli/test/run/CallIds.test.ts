import { describe, expect, it } from "vitest"
import * as CallIds from "../../src/run/CallIds.ts"
import type { InputRequest } from "../../src/InputLine.ts"

/** `abhed-ext run`'s call ids for input lines that leave them out (docs/cli.md). */

const call = (tool: string, call_id?: string): InputRequest => ({
  event: "tool_call",
  tool,
  args: {},
  ...(call_id === undefined ? {} : { call_id })
})
const result = (tool: string, call_id?: string): InputRequest => ({
  event: "tool_result",
  tool,
  args: {},
  content: "",
  is_error: false,
  ...(call_id === undefined ? {} : { call_id })
})
const invoke = (tool: string): InputRequest => ({ event: "invoke_tool", tool, args: {} })

const idsOf = (requests: ReadonlyArray<InputRequest>): Array<string | undefined> => {
  const ids = CallIds.make()
  return requests.map((r) => {
    const assigned = ids.assign(r)
    return "call_id" in assigned ? assigned.call_id : undefined
  })
}

describe("CallIds", () => {
  it("a result without an id is its call's: the latest call of the same tool still awaiting one", () => {
    expect(idsOf([call("bash"), result("bash"), call("read"), call("bash"), result("bash"), result("read")])).toEqual([
      "c-1",
      "c-1",
      "c-2",
      "c-3",
      "c-3",
      "c-2"
    ])
  })

  it("a made id never repeats one given earlier; given ids stay as they are", () => {
    // The host's own numbering made c-1, c-2, c-3, c-3 here: two calls sharing an id, the result paired with neither.
    expect(
      idsOf([call("bash"), result("bash"), call("bash", "c-3"), call("bash"), call("read", "c-5"), call("read")])
    ).toEqual(["c-1", "c-1", "c-3", "c-2", "c-5", "c-4"])
    expect(idsOf([call("x", "c-1"), call("x", "c-2"), call("x")])).toEqual(["c-1", "c-2", "c-3"])
  })

  it("a result with an id settles that call; one with no call awaiting gets an id of its own", () => {
    expect(idsOf([call("bash", "a"), call("bash", "b"), result("bash", "a"), result("bash"), result("bash")])).toEqual([
      "a",
      "b",
      "a",
      "b",
      "c-1"
    ])
  })

  it("an invoke_tool without call_id gets a new id here (the session finds its call by its args); the result pairs", () => {
    expect(idsOf([call("wc"), invoke("wc"), result("wc")])).toEqual(["c-1", "c-2", "c-1"])
    expect(idsOf([invoke("wc")])).toEqual(["c-1"])
  })

  it("a result with args, without an id, is the awaiting call's with those args, proposed or decided", () => {
    const ids = CallIds.make()
    const idOf = (r: InputRequest) => {
      const assigned = ids.assign(r)
      return "call_id" in assigned ? assigned.call_id : undefined
    }
    const with_ = (event: "tool_call" | "tool_result", path: string): InputRequest =>
      event === "tool_call"
        ? { event, tool: "rm", args: { path } }
        : { event, tool: "rm", args: { path }, content: "", is_error: false }
    expect([with_("tool_call", "/a"), with_("tool_call", "/b"), with_("tool_call", "/c")].map(idOf)).toEqual([
      "c-1",
      "c-2",
      "c-3"
    ])
    ids.ran("c-2", { path: "/sandbox/b" }) // an extension rewrote c-2's args
    expect(
      [with_("tool_result", "/a"), with_("tool_result", "/sandbox/b"), with_("tool_result", "/z")].map(idOf)
    ).toEqual(["c-1", "c-2", "c-3"])
  })

  it("a run fed calls alone (no results) keeps them awaiting in linear time", { timeout: 60_000 }, () => {
    // Copying the awaiting list at each call made this quadratic: minutes of CPU for 50 000 calls, not milliseconds.
    const ids = CallIds.make()
    for (let i = 0; i < 50_000; i++) ids.assign(call("bash"))
    expect(ids.assign(result("bash"))).toMatchObject({ call_id: "c-50000" })
  })

  it("a result pairs by its args without a walk through every awaiting call", { timeout: 30_000 }, () => {
    // Comparing the result's args with each awaiting call's cost 89 s of CPU for 20 000 calls, then 20 000 results.
    const ids = CallIds.make()
    const rm = (event: "tool_call" | "tool_result", path: string): InputRequest =>
      event === "tool_call"
        ? { event, tool: "rm", args: { path } }
        : { event, tool: "rm", args: { path }, content: "", is_error: false }
    for (let i = 0; i < 20_000; i++) ids.assign(rm("tool_call", `/${i}`))
    for (let i = 0; i < 19_998; i++) ids.assign(rm("tool_result", `/none-${i}`))
    // c-1 and c-2 await: the result with c-1's args is c-1's, not the latest call's.
    expect(ids.assign(rm("tool_result", "/0"))).toMatchObject({ call_id: "c-1" })
  })

  it("other events are left as they are", () => {
    const ids = CallIds.make()
    const context: InputRequest = { event: "context", messages: [] }
    expect(ids.assign(context)).toBe(context)
  })
})
