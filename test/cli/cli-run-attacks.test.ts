import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, runCli } from "../support/cli-helpers.ts"
import { Patient } from "../support/extension-helpers.ts"

/**
 * `abhed-ext run` attacked by a hurried agent author and by an agent that wants a denied tool to run: call_id reuse,
 * made-up ids, invokes without ids between several calls of one tool, JSON values the wire writes otherwise. One run
 * holds the lines; what the tool's owner ran is read from the file it writes, not from the output alone.
 */

type Line = Record<string, unknown>

const dir = () => mkdtempSync(join(tmpdir(), "abhed-run-attacks-"))

/** The owner of `wipe` and `peek`: writes `{call_id, args}` of every invoke it gets to `ran`. */
const owner = (ran: string) => `
  const fs = require("node:fs")
  const tool = (name) => ({ name, description: "", input_schema: { type: "object" } })
  require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const req = JSON.parse(line)
    if (req.event === "invoke_tool")
      fs.appendFileSync(${JSON.stringify(ran)}, JSON.stringify({ call_id: req.call_id, args: req.args }) + "\\n")
    const reply = req.event === "list_tools" ? { tools: [tool("wipe"), tool("peek")] }
      : req.event === "invoke_tool" ? { result: "ran" } : {}
    process.stdout.write(JSON.stringify({ id: req.id, ...reply }) + "\\n")
  })`

/** Denies wiping "/", asks for "/ask", moves /tmp/… to /sandbox/…; writes `{call_id, args}` of each result to `seen`. */
const guard = (seen: string) => `
  require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const req = JSON.parse(line)
    if (req.event === "tool_result")
      require("node:fs").appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ call_id: req.call_id, args: req.args }) + "\\n")
    const path = req.args?.path ?? ""
    const reply = path === "/" ? { block: true, reason: "no" }
      : path === "/ask" ? { ask: true, reason: "sure?" }
      : path.startsWith("/tmp/") ? { args: { ...req.args, path: "/sandbox/" + path.slice(5) } } : {}
    process.stdout.write(JSON.stringify({ id: req.id, ...reply }) + "\\n")
  })`

const config = (ran: string, seen: string) => ({
  extensions: [
    {
      name: "owner",
      command: process.execPath,
      args: ["-e", owner(ran)],
      events: ["list_tools", "invoke_tool"],
      ...Patient
    },
    {
      name: "guard",
      command: process.execPath,
      args: ["-e", guard(seen)],
      events: ["tool_call", "tool_result"],
      ...Patient
    }
  ]
})

const call = (args: unknown, call_id?: string, tool = "wipe") =>
  JSON.stringify({ event: "tool_call", tool, args, call_id })
const invoke = (args: unknown, call_id?: string, tool = "wipe") =>
  JSON.stringify({ event: "invoke_tool", tool, args, call_id })

const result = (args?: unknown) =>
  JSON.stringify({ event: "tool_result", tool: "wipe", args, content: "done", is_error: false })

describe("run: an invoke_tool cannot be made to run what was denied, nor be put on another call", () => {
  it("call_id reuse, made-up ids, ids between calls, wire values, a verdict run twice; refused invokes are audited", async () => {
    const d = dir()
    const ran = join(d, "ran.jsonl")
    const audit = join(d, "audit.jsonl")
    const file = join(d, "abhed.json")
    const seen = join(d, "seen.jsonl")
    writeFileSync(file, JSON.stringify(config(ran, seen)))
    const input = [
      call({ path: "/" }, "x"), // 1: denied
      call({}, "x", "peek"), // 2: the denied call's id reused for a harmless call: allowed
      invoke({ path: "/" }), // 3: no id, the denied args: still line 1's, refused
      invoke({ path: "/" }, "made-up"), // 4: an id no call was decided under, the denied args: refused
      call({ path: "/a" }), // 5: c-1
      call({ path: "/b" }), // 6: c-2 (the latest awaiting a result)
      invoke({ path: "/a" }), // 7: no id: c-1's, runs as c-1 (not as c-2)
      invoke({ path: "/zzz" }), // 8: no id, no call holds it: runs under an id of its own, not as c-2
      call({ path: "/ask" }), // 9: ask: the agent's to put to the user
      invoke({ path: "/ask" }), // 10: runs (the user said yes)
      `{"event":"tool_call","tool":"wipe","args":{"path":"/q","n":1e400}}`, // 11: Infinity: the host denies it
      invoke({ path: "/q", n: null }), // 12: the same args as the wire writes them: refused
      `{"event":"invoke_tool","tool":"wipe","args":{"path":"\\u002f","path":"/"}}`, // 13: "/" spelt otherwise: refused
      invoke({}, "x", "peek"), // 14: the reused id's latest call: runs
      `{"event":"invoke_tool","tool":"wipe","args":{"path":"/a"},"session_id":"other"}`, // 15: another session
      JSON.stringify({ event: "tool_result", tool: "wipe", call_id: "c-1", content: "", is_error: false }), // 16
      invoke({ path: "/a" }), // 17: after c-1's result: still c-1's, which ran on line 7: refused
      call({ path: "/d" }), // 18: c-6
      call({ path: "/d" }), // 19: c-7, the same args
      invoke({ path: "/d" }), // 20: runs as c-7
      invoke({ path: "/d" }), // 21: runs as c-6: two calls, two runs
      invoke({ path: "/d" }), // 22: a third run no verdict allowed: refused
      invoke({}), // 23: line 11's output printed "args":{}, but no guard judged {}: not held, runs
      call({ path: "/e" }), // 24: c-9
      call({ path: "/f" }), // 25: c-10
      result({ path: "/e" }), // 26: no id, /e's args: c-9's result, not the latest call's
      result(), // 27: no id, no args: the call still awaiting, c-10, with its args
      JSON.stringify({ event: "before_agent_start", system: "a\u2028b\u2029c\u0085d" }) // 28: line breaks to some
    ]
    const r = await runCli(["run", "--config", file, "--audit", audit, "--summary", "--strict"], {
      input: `${input.join("\n")}\n`
    })
    expect(r.code, r.stderr).toBe(0)
    // A refused invoke is no bad line: the summary counts it apart (line 15, another session, is the bad one).
    expect(r.stderr).toContain(
      "10 tool call(s): 2 denied, 1 asked, 7 allowed; 11 other event(s); 1 bad line(s); 6 invoke(s) refused"
    )
    // One line per decision for any reader: Python's splitlines() also breaks at U+2028, U+2029 and U+0085.
    expect(r.stdout).not.toMatch(/[\u0085\u2028\u2029]/)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out).toHaveLength(input.length)
    expect(out[0]).toMatchObject({ decision: "deny" })
    expect(out[1]).toMatchObject({ decision: "allow" })
    expect(out[2]).toEqual({
      error: 'invoke_tool: the tool_call "x" (line 1) was denied: a denied call never runs',
      line: 3
    })
    expect(out[27]).toEqual({ event: "before_agent_start", system: "a\u2028b\u2029c\u0085d" })
    expect(out[3]).toEqual({
      error:
        'invoke_tool: the tool_call "x" (line 1) was denied (call_id "made-up" names no decided call; its tool and ' +
        "args name this one): a denied call never runs",
      line: 4
    })
    expect(out[6]).toEqual({ event: "invoke_tool", result: "ran", is_error: false })
    expect(out[8]).toMatchObject({ decision: "ask" })
    expect(out[10]).toMatchObject({ decision: "deny", reasons: [{ extension: "host" }] })
    expect(out[11]).toMatchObject({
      line: 12,
      error: expect.stringContaining('the tool_call "c-5" (line 11) was denied')
    })
    expect(out[12]).toMatchObject({ line: 13, error: expect.stringContaining('"x" (line 1) was denied') })
    expect(out[13]).toEqual({ event: "invoke_tool", result: "ran", is_error: false })
    expect(out[14]).toMatchObject({ line: 15, error: expect.stringContaining('session_id "other"') })
    expect(out[16]).toEqual({
      error:
        'invoke_tool: the tool_call "c-1" (line 5) ran already (line 7): a decided call runs once; send a new ' +
        "tool_call to run it again; nothing ran",
      line: 17
    })
    expect(out[21]).toMatchObject({ line: 22, error: expect.stringContaining('"c-7" (line 19) ran already (line 20)') })
    // What ran, and under which call: line 7 as c-1, line 8 under an id of its own, lines 20 and 21 one call each.
    expect(jsonLines(readFileSync(ran, "utf8"))).toEqual([
      { call_id: "c-1", args: { path: "/a" } },
      { call_id: "c-3", args: { path: "/zzz" } },
      { call_id: "c-4", args: { path: "/ask" } },
      { call_id: "x", args: {} },
      { call_id: "c-7", args: { path: "/d" } },
      { call_id: "c-6", args: { path: "/d" } },
      { call_id: "c-8", args: {} }
    ])
    // Each result went to its own call: the extensions pair them by call_id.
    expect(jsonLines(readFileSync(seen, "utf8"))).toEqual([
      { call_id: "c-1", args: { path: "/a" } },
      { call_id: "c-9", args: { path: "/e" } },
      { call_id: "c-10", args: { path: "/f" } }
    ])
    // Each refused invoke is in the audit: what was tried, under which call, and why nothing ran.
    const refused = (jsonLines(readFileSync(audit, "utf8")) as Array<Line>).filter(
      (rec) => rec["event"] === "invoke_tool" && (rec["rounds"] as Array<unknown>).length === 0
    )
    expect(refused.map((rec) => [rec["call_id"], rec["args"]])).toEqual([
      ["x", { path: "/" }],
      ["made-up", { path: "/" }],
      ["c-5", { path: "/q", n: null }],
      ["x", { path: "/" }],
      ["c-1", { path: "/a" }],
      ["c-7", { path: "/d" }]
    ])
    expect(refused[0]).toMatchObject({
      tool: "wipe",
      outcome: { is_error: true },
      notes: [expect.stringContaining('not sent to any extension: invoke_tool: the tool_call "x" (line 1) was denied')]
    })
  })
})
