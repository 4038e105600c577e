import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { type EventName, EventNames, Request, RequestSchemas } from "../src/index.ts"

/** One sample request per event, as documented in docs/protocol.md. */
const samples: { readonly [E in EventName]: Record<string, unknown> } = {
  tool_call: {
    event: "tool_call",
    session_id: "s-1",
    id: "4",
    call_id: "c-7",
    tool: "bash",
    args: { command: "rm -rf /tmp/x", description: "clean up" }
  },
  tool_result: {
    event: "tool_result",
    session_id: "s-1",
    id: "4",
    call_id: "c-7",
    tool: "read",
    args: { path: "notes.txt" },
    content: "key AKIAABCDEFGHIJKLMNOP",
    is_error: false
  },
  context: {
    event: "context",
    session_id: "s-1",
    id: "4",
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" }
    ]
  },
  before_agent_start: { event: "before_agent_start", session_id: "s-1", id: "4", system: "You are Abhed." },
  before_compact: { event: "before_compact", session_id: "s-1", id: "4", messages: [{ role: "user", content: "hi" }] },
  list_tools: { event: "list_tools", session_id: "s-1", id: "4" },
  invoke_tool: {
    event: "invoke_tool",
    session_id: "s-1",
    id: "4",
    call_id: "c-8",
    tool: "weather",
    args: { city: "Pune" }
  },
  session_start: { event: "session_start", session_id: "s-1", id: "4" },
  session_end: { event: "session_end", session_id: "s-1", id: "4" }
}

const decodes = (schema: Schema.Decoder<unknown>, input: unknown) =>
  Result.isSuccess(Schema.decodeUnknownResult(schema)(input))

describe("request schemas", () => {
  it.each(EventNames)("%s: the sample decodes with its own schema and with Request", (event) => {
    expect(decodes(RequestSchemas[event], samples[event])).toBe(true)
    expect(Schema.decodeUnknownSync(Request)(samples[event])).toEqual(samples[event])
  })

  it.each(EventNames)("%s: a sample of another event does not decode with this event's schema", (event) => {
    for (const other of EventNames) {
      if (other !== event) expect(decodes(RequestSchemas[event], samples[other])).toBe(false)
    }
  })

  it.each(EventNames)("%s: without session_id it fails", (event) => {
    const { session_id: _, ...rest } = samples[event]
    expect(decodes(RequestSchemas[event], rest)).toBe(false)
    expect(decodes(Request, rest)).toBe(false)
  })

  it.each(EventNames)(
    "%s: a reader accepts a request without id, or with any JSON id (the host's are strings)",
    (event) => {
      const { id: _, ...rest } = samples[event]
      expect(decodes(RequestSchemas[event], rest)).toBe(true)
      expect(Schema.decodeUnknownSync(Request)({ ...samples[event], id: { n: 4 } })).toEqual({
        ...samples[event],
        id: { n: 4 }
      })
    }
  )

  it("settling rounds after the first carry an integer round", () => {
    expect(decodes(RequestSchemas.tool_call, { ...samples.tool_call, round: 2 })).toBe(true)
    expect(decodes(RequestSchemas.tool_result, { ...samples.tool_result, round: 3 })).toBe(true)
    expect(decodes(RequestSchemas.tool_call, { ...samples.tool_call, round: "2" })).toBe(false)
    expect(decodes(RequestSchemas.tool_call, { ...samples.tool_call, round: 1.5 })).toBe(false)
  })

  it.each([
    ["tool_call", { args: "rm -rf /" }],
    ["tool_call", { call_id: 7 }],
    ["tool_result", { is_error: "no" }],
    ["tool_result", { content: null }],
    ["context", { messages: {} }],
    ["before_agent_start", { system: 1 }],
    ["invoke_tool", { tool: undefined }]
  ] as const)("%s with %j fails", (event, patch) => {
    expect(decodes(RequestSchemas[event], { ...samples[event], ...patch })).toBe(false)
  })

  it("an unknown event is not a Request", () => {
    expect(decodes(Request, { event: "tool_calls", session_id: "s-1" })).toBe(false)
  })
})
