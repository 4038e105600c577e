import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import { decodeReply, type EventName, EventNames, KnownReplyFields, ReplyFields } from "../src/index.ts"

const ok = <E extends EventName>(event: E, input: unknown) => {
  const r = decodeReply(event, input)
  if (Result.isFailure(r)) throw new Error(`expected success, got: ${r.failure.message}`)
  return r.success
}
const malformed = (event: EventName, input: unknown) => {
  const r = decodeReply(event, input)
  if (Result.isSuccess(r)) throw new Error(`expected MalformedReply, got ${JSON.stringify(r.success)}`)
  return r.failure
}

/** A valid, non-empty reply for every event, with every field that counts. */
const valid: { readonly [E in EventName]: object } = {
  tool_call: { block: true, ask: false, reason: "no", args: { command: "ls" } },
  tool_result: { content: "redacted", is_error: true },
  context: { keep: [0, 2, 5] },
  before_agent_start: { system: "Be careful." },
  before_compact: { cancel: false, summary: "Working on ABC-123." },
  list_tools: { tools: [{ name: "weather", description: "Weather now", input_schema: { type: "object" } }] },
  invoke_tool: { result: { temp: 21 }, is_error: false },
  session_start: {},
  session_end: {}
}

describe("decodeReply", () => {
  it.each(EventNames)("%s: a valid reply decodes to itself, nothing ignored", (event) => {
    expect(ok(event, valid[event])).toEqual({ reply: valid[event], ignored: [] })
  })

  it.each(EventNames)(
    "%s: a number JSON cannot carry (1e999 parses as Infinity) is malformed, wherever it is",
    (event) => {
      const parsed: unknown = JSON.parse(`{"extra": {"deep": [1, 1e999]}}`)
      const error = malformed(event, { ...valid[event], ...(parsed as object) })
      expect([error.path, error.expected, error.got]).toEqual([
        "extra",
        "numbers JSON can carry (1e999 reads as Infinity)",
        "a number out of range"
      ])
      expect(malformed(event, { ...valid[event], n: Number.NaN }).path).toBe("n")
      expect(malformed(event, { ...valid[event], n: -Infinity }).path).toBe("n")
    }
  )

  it.each(EventNames)(
    "%s: a BigInt anywhere (only an in-process extension can hand one over) is malformed",
    (event) => {
      const error = malformed(event, { ...valid[event], extra: { deep: [1, 2n] } })
      expect([error.path, error.expected, error.got]).toEqual(["extra", "JSON (a BigInt is not)", "a BigInt"])
      expect(malformed(event, 3n).path).toBe("")
    }
  )

  it.each(EventNames)("%s: {} is no opinion", (event) => {
    expect(ok(event, {})).toEqual({ reply: {}, ignored: [] })
  })

  it.each(EventNames)("%s: unknown fields are ignored and not listed", (event) => {
    expect(ok(event, { ...valid[event], future_field: 1, x: { y: [1] } })).toEqual({
      reply: valid[event],
      ignored: []
    })
  })

  it.each(EventNames)("%s: known fields of other events are ignored and listed, sorted", (event) => {
    const own = new Set(Object.keys(ReplyFields[event]))
    const foreign = [...KnownReplyFields].filter((k) => !own.has(k))
    const input = Object.fromEntries(foreign.map((k) => [k, 1]))
    const decoded = ok(event, input)
    expect(decoded.reply).toEqual({})
    expect(decoded.ignored).toEqual([...foreign].sort())
  })

  it("a value JSON cannot hold (from an in-process handler) is malformed, never a thrown error", () => {
    const r = decodeReply("tool_call", { block: BigInt(1) })
    expect(Result.isFailure(r) && r.failure.message).toBe("block: expected JSON (a BigInt is not), got a BigInt")
  })

  it("a huge or negative keep index is an integer: decoded, and left to the combiner to ignore as out of range", () => {
    expect(ok("context", { keep: [0, 1e300, -4, 9007199254740993] })).toEqual({
      reply: { keep: [0, 1e300, -4, 9007199254740993] },
      ignored: []
    })
  })

  it("a tool declaration holding 1e999 decodes: the registry rejects that declaration alone", () => {
    const tools = [
      {
        name: "t",
        description: "",
        input_schema: { type: "object", properties: { n: { maximum: Number.POSITIVE_INFINITY } } }
      }
    ]
    expect(ok("list_tools", { tools })).toEqual({ reply: { tools }, ignored: [] })
  })

  it("a non-finite keep index hides nothing behind it: a keep nested too deep, or holding a BigInt, is still malformed", () => {
    let deep: unknown = 0
    for (let i = 0; i < 20_000; i++) deep = [deep]
    expect(malformed("context", { keep: [deep, Number.POSITIVE_INFINITY] }).path).toBe("keep")
    expect(malformed("context", { keep: [Number.NaN, [[10n]]] }).got).toBe("a BigInt")
  })

  it("a keep index that is not an integer is decoded, not malformed: one bad index must not kill a filter", () => {
    expect(ok("context", { keep: [0, 2.5] })).toEqual({ reply: { keep: [0, 2.5] }, ignored: [] })
    expect(ok("context", { keep: [0, "1", null, [2]] })).toEqual({ reply: { keep: [0, "1", null, [2]] }, ignored: [] })
    expect(ok("context", { keep: [-0.5, Number.POSITIVE_INFINITY] })).toEqual({
      reply: { keep: [-0.5, Number.POSITIVE_INFINITY] },
      ignored: []
    })
  })

  it("a tool name that is not a valid tool name decodes: the registry rejects that declaration, not the reply", () => {
    const tools = ["", "bash\u200b", "b\u0430sh"].map((name) => ({ name, description: "", input_schema: {} }))
    expect(ok("list_tools", { tools })).toEqual({ reply: { tools }, ignored: [] })
  })

  it("keep in a tool_call reply is ignored and listed; the rest counts", () => {
    expect(ok("tool_call", { block: true, keep: [1], summary: 3 })).toEqual({
      reply: { block: true },
      ignored: ["keep", "summary"]
    })
  })

  it("a foreign known field with a wrong type does not make a reply malformed", () => {
    expect(ok("context", { block: "yes", keep: [0] })).toEqual({ reply: { keep: [0] }, ignored: ["block"] })
  })

  it.each(EventNames)("%s: null fields count as absent", (event) => {
    const nulls = Object.fromEntries(Object.keys(ReplyFields[event]).map((k) => [k, null]))
    expect(ok(event, nulls)).toEqual({ reply: {}, ignored: [] })
  })

  it('{"allow": true} is an unknown field: no opinion, and no permit in the result', () => {
    for (const event of EventNames) {
      const decoded = ok(event, { allow: true, permit: true, decision: "allow" })
      expect(decoded).toEqual({ reply: {}, ignored: [] })
      expect(Object.hasOwn(decoded.reply, "allow")).toBe(false)
    }
  })

  it("a JSON-RPC error (an MCP server configured as a plain extension) is malformed, not no opinion; a jsonrpc field alone is unknown", () => {
    for (const event of EventNames) {
      const error = malformed(event, { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "method not found" } })
      expect(error.message).toBe(
        'reply: expected an extension\'s reply, got a JSON-RPC error (an MCP server? give its config entry "protocol": "mcp", or run it through abhed-ext mcp)'
      )
      expect(ok(event, { jsonrpc: "2.0", id: 1 })).toEqual({ reply: {}, ignored: [] })
    }
  })

  it.each([
    ["true", true, "reply: expected a JSON object, got true"],
    ["[]", [], "reply: expected a JSON object, got array []"],
    ['"x"', "x", "reply: expected a JSON object, got string (1 chars)"],
    ["null", null, "reply: expected a JSON object, got null"],
    ["1", 1, "reply: expected a JSON object, got number"]
  ])("non-object JSON %s is malformed", (_, input, message) => {
    for (const event of EventNames) {
      const error = malformed(event, input)
      expect(error._tag).toBe("MalformedReply")
      expect(error.event).toBe(event)
      expect(error.path).toBe("")
      expect(error.message).toBe(message)
    }
  })

  it.each([
    ["tool_call", { block: "yes" }, "block", "block: expected boolean, got string (3 chars)"],
    ["tool_call", { ask: 1 }, "ask", "ask: expected boolean, got number"],
    ["tool_call", { reason: false }, "reason", "reason: expected string, got false"],
    ["tool_call", { args: [1] }, "args", 'args: expected object, got array ["<number>"]'],
    ["tool_call", { args: "ls" }, "args", "args: expected object, got string (2 chars)"],
    [
      "tool_result",
      { content: { text: "x" } },
      "content",
      'content: expected string, got object {"<4 chars>":"<1 chars>"}'
    ],
    ["tool_result", { is_error: "true" }, "is_error", "is_error: expected boolean, got string (4 chars)"],
    ["context", { keep: "all" }, "keep", "keep: expected array of message indices, got string (3 chars)"],
    [
      "context",
      { keep: { "0": 0 } },
      "keep",
      'keep: expected array of message indices, got object {"<1 chars>":"<number>"}'
    ],
    ["context", { keep: 0 }, "keep", "keep: expected array of message indices, got number"],
    ["before_agent_start", { system: ["a"] }, "system", 'system: expected string, got array ["<1 chars>"]'],
    ["before_compact", { cancel: "no" }, "cancel", "cancel: expected boolean, got string (2 chars)"],
    ["before_compact", { summary: 42 }, "summary", "summary: expected string, got number"],
    ["list_tools", { warnings: "renamed" }, "warnings", "warnings: expected array of strings, got string (7 chars)"],
    ["list_tools", { warnings: ["ok", 7] }, "warnings[1]", "warnings[1]: expected string, got number"],
    [
      "list_tools",
      { tools: { name: "x" } },
      "tools",
      'tools: expected array of {name, description, input_schema}, got object {"name":"<1 chars>"}'
    ],
    [
      "list_tools",
      { tools: [{ name: "a", description: "", input_schema: {} }, 7] },
      "tools[1]",
      "tools[1]: expected object, got number"
    ],
    [
      "list_tools",
      {
        tools: [
          { name: "a", description: "", input_schema: {} },
          { name: 7, description: "", input_schema: {} }
        ]
      },
      "tools[1].name",
      "tools[1].name: expected string, got number"
    ],
    [
      "list_tools",
      { tools: [{ name: "a", input_schema: {} }] },
      "tools[0].description",
      "tools[0].description: expected string, got nothing"
    ],
    [
      "list_tools",
      { tools: [{ name: "a", description: "d", input_schema: [] }] },
      "tools[0].input_schema",
      "tools[0].input_schema: expected object, got array []"
    ],
    ["invoke_tool", { is_error: 0 }, "is_error", "is_error: expected boolean, got number"]
  ] as const)("%s reply %j is malformed at %s", (event, input, path, message) => {
    const error = malformed(event, input)
    expect(error.path).toBe(path)
    expect(error.message).toBe(message)
  })

  it("an object's keys are shown by their length, but for the protocol's own field names, each apart", () => {
    const error = malformed("tool_result", {
      content: { "sk-live-4eC39Hq": "[REDACTED]", "ghp_16C7e42F292c": "x", block: true }
    })
    expect(error.message).toBe(
      'content: expected string, got object {"<15 chars>":"<10 chars>","<16 chars>":"<1 chars>","block":true}'
    )
    const same = malformed("tool_result", { content: { ab: 1, cd: 2 } })
    expect(same.message).toBe('content: expected string, got object {"<2 chars>":"<number>","<2 chars>#2":"<number>"}')
  })

  it("a long offending value is shortened in the message", () => {
    const error = malformed("tool_call", { reason: "x".repeat(500).split("") })
    expect(error.message.length).toBeLessThan(120)
    expect(error.message).toMatch(/^reason: expected string, got array \["<1 chars>".*\.\.\.$/)
  })

  it("property: a malformed reply is described by its shape only, for every field of every event (no string or number of it in the cause)", () => {
    const Secret = "wJalrXUtnFEMI"
    const SecretNumber = 4111111111111111
    // A value that holds the secret somewhere: as a string, inside one, as a number, nested in arrays and objects.
    const holding = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.tuple(fc.string(), fc.string()).map(([a, b]) => `${a}${Secret}${b}`),
        fc.constant(SecretNumber),
        fc.array(tie("value"), { minLength: 1, maxLength: 3 }),
        fc.dictionary(fc.constantFrom("a", "text", "name", "input_schema"), tie("value"), { minKeys: 1, maxKeys: 3 }),
        // A redactor's map from the secrets it found to their replacements.
        fc.tuple(fc.string(), tie("value")).map(([a, value]) => ({ [`${a}${Secret}`]: value }))
      )
    })).value
    const fields = EventNames.flatMap((event) =>
      Object.keys(ReplyFields[event]).map((field) => [event, field] as const)
    )
    // Where the value goes: the field itself, a tool declaration's own fields, or the reply as a whole.
    const placed = fc.oneof(
      fc
        .tuple(fc.constantFrom(...fields), holding)
        .map(([[event, field], value]) => [event, { [field]: value }] as const),
      fc.tuple(fc.constantFrom("name", "description", "input_schema"), holding, fc.nat(2)).map(
        ([key, value, at]) =>
          [
            "list_tools" as const,
            {
              tools: [
                ...Array.from({ length: at }, () => ({ name: "ok", description: "", input_schema: {} })),
                { name: "t", description: "", input_schema: {}, [key]: value }
              ]
            }
          ] as const
      ),
      fc.tuple(fc.constantFrom(...EventNames), holding).map(([event, value]) => [event, value] as const)
    )
    fc.assert(
      fc.property(placed, ([event, input]) => {
        const r = decodeReply(event, input)
        if (Result.isSuccess(r)) return // a field that takes any value (invoke_tool's result), or the wrong shape for no field
        expect(r.failure.message).not.toContain(Secret)
        expect(r.failure.message).not.toContain(String(SecretNumber))
        expect(r.failure.got).not.toContain(Secret)
      }),
      { numRuns: 2000 }
    )
  })

  it("invoke_tool result may be any JSON value", () => {
    for (const result of ["text", 3, true, [1, 2], { a: { b: null } }]) {
      expect(ok("invoke_tool", { result }).reply).toEqual({ result })
    }
  })

  it("keys named like Object.prototype members are unknown fields, not a crash", () => {
    const input = JSON.parse('{"__proto__": {"block": true}, "toString": 1, "constructor": "x", "hasOwnProperty": 2}')
    for (const event of EventNames) {
      const decoded = ok(event, input)
      expect(decoded).toEqual({ reply: {}, ignored: [] })
      expect(Object.getPrototypeOf(decoded.reply)).toBe(Object.prototype)
    }
  })

  it("property: any JSON object decodes or is malformed, never throws; a success keeps only its event's fields", () => {
    const fieldValue = fc.oneof(fc.jsonValue(), fc.constantFrom(null, true, "s", 1, [0, 1], {}))
    const keys = fc.constantFrom(...KnownReplyFields, "allow", "other", "__proto__", "toString")
    const event = fc.constantFrom(...EventNames)
    fc.assert(
      fc.property(event, fc.dictionary(keys, fieldValue), (event, input) => {
        const r = decodeReply(event, input)
        if (Result.isSuccess(r)) {
          const own = Object.keys(ReplyFields[event])
          for (const k of Object.keys(r.success.reply)) expect(own).toContain(k)
          for (const k of r.success.ignored) expect(own).not.toContain(k)
        } else {
          expect(r.failure.message).toMatch(/^[a-z_]+(\[\d+\](\.[a-z_]+)?)?: expected .+, got .+$/)
        }
      }),
      { numRuns: 1000 }
    )
  })
})

describe("decodeReply on deeply nested JSON (JSON.parse accepts any depth; JSON.stringify overflows the stack)", () => {
  const deep = (depth: number): unknown => {
    let v: unknown = "x"
    for (let i = 0; i < depth; i++) v = [v]
    return v
  }
  it("a field nested too deeply is malformed, not a thrown RangeError", () => {
    expect(malformed("tool_call", { args: { a: deep(100_000) } }).path).toBe("args")
    expect(malformed("invoke_tool", { result: deep(100_000) }).path).toBe("result")
    expect(malformed("tool_call", { block: deep(100_000) }).path).toBe("block")
    expect(malformed("tool_call", deep(100_000)).path).toBe("")
  })
  it("ordinary nesting is accepted", () => {
    expect(ok("tool_call", { args: { a: deep(64) } }).reply.args).toEqual({ a: deep(64) })
  })
})
