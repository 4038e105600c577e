import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { compileInputSchema, InputSchemaLimits } from "../src/InputSchema.ts"
import { checkingCost, schemaGraph } from "../src/InputSchemaGraph.ts"
import { combineTools } from "../src/ToolRegistry.ts"

const accepts = (inputSchema: Record<string, unknown>, args: unknown): boolean => {
  const compiled = compileInputSchema(inputSchema)
  if (Result.isFailure(compiled)) throw new Error(compiled.failure)
  return Result.isSuccess(Schema.decodeUnknownResult(compiled.success)(args))
}
const failure = (inputSchema: Record<string, unknown>): string => {
  const compiled = compileInputSchema(inputSchema)
  return Result.isFailure(compiled) ? compiled.failure : "compiled"
}

describe("compileInputSchema", () => {
  const wordCount = { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
  it("checks required keys, types and bounds", () => {
    expect(accepts(wordCount, { text: "a b" })).toBe(true)
    expect(accepts(wordCount, {})).toBe(false)
    expect(accepts(wordCount, { text: 3 })).toBe(false)
    const format = { type: "object", properties: { indent: { type: "integer", minimum: 0, maximum: 8 } } }
    expect(accepts(format, { indent: 2 })).toBe(true)
    expect(accepts(format, { indent: 9 })).toBe(false)
    expect(accepts(format, { indent: 1.5 })).toBe(false)
  })
  it("{} accepts any args", () => {
    expect(accepts({}, { anything: [1] })).toBe(true)
  })
  it("rejects what it cannot check, saying where", () => {
    expect(failure({ type: "object", properties: { a: { type: "strin" } } })).toBe(
      `input_schema.properties.a.type: "strin" is not a JSON Schema type (string, number, integer, boolean, array, object, null)`
    )
    expect(failure({ type: "object", properties: { a: { items: [{ type: 3 }] } } })).toContain(
      "input_schema.properties.a.items[0].type: 3"
    )
    expect(failure({ type: "string" })).toBe(`input_schema: the args are an object, but "type" is "string"`)
    expect(failure({ type: "object", properties: { a: { $ref: "#/$defs/nope" } } })).toContain(
      `Missing definition "nope"`
    )
    // 1e999 in a declaration: that declaration is rejected (the reply stays good, the extension alive).
    expect(failure({ type: "object", properties: { n: { type: "number", maximum: Number.POSITIVE_INFINITY } } })).toBe(
      "input_schema holds a number JSON cannot carry (1e999 reads as Infinity)"
    )
  })
  it("checks every `type` wherever a subschema may stand, as the $ref graph walks them (one walker)", () => {
    const bad = { type: "strin" }
    for (const [schema, at] of [
      [{ if: {}, then: bad }, "then"],
      [{ if: {}, else: bad }, "else"],
      [{ if: bad }, "if"],
      [{ dependentSchemas: { a: bad } }, "dependentSchemas.a"],
      [{ unevaluatedProperties: bad }, "unevaluatedProperties"],
      [{ unevaluatedItems: bad }, "unevaluatedItems"],
      [{ additionalItems: bad }, "additionalItems"]
    ] as const) {
      expect(failure({ type: "object", properties: { a: schema } })).toContain(
        `input_schema.properties.a.${at}.type: "strin"`
      )
    }
  })
  it("a property named type is a property, not a keyword", () => {
    expect(accepts({ type: "object", properties: { type: { type: "string" } } }, { type: "x" })).toBe(true)
  })
  it("patterns are not run (a declared regular expression could be catastrophic)", () => {
    expect(accepts({ type: "object", properties: { a: { type: "string", pattern: "^(a+)+$" } } }, { a: "b" })).toBe(
      true
    )
  })
})

describe("combineTools with input_schema", () => {
  it("a declaration with an unusable input_schema is rejected with why; the extension's other tools stay", () => {
    const out = combineTools(
      [],
      [
        {
          name: "x",
          value: {
            tools: [
              { name: "ok", description: "", input_schema: { type: "object" } },
              { name: "bad", description: "", input_schema: { type: "array" } }
            ]
          }
        }
      ]
    )
    expect(out.accepted.map((a) => a.tool.name)).toEqual(["ok"])
    expect(out.rejected).toEqual([
      {
        name: "bad",
        extensions: ["x"],
        reason: "input_schema",
        detail: `input_schema: the args are an object, but "type" is "array"`
      }
    ])
  })
})

/** Why the args were refused, or "accepted". */
const refusal = (inputSchema: Record<string, unknown>, args: unknown): string => {
  const compiled = compileInputSchema(inputSchema)
  if (Result.isFailure(compiled)) throw new Error(compiled.failure)
  const decoded = Schema.decodeUnknownResult(compiled.success)(args)
  return Result.isFailure(decoded) ? decoded.failure.message : "accepted"
}

/** Arrays nested `depth` deep around `leaf`. */
const nested = (depth: number, leaf: unknown): unknown => {
  let value = leaf
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

describe("compileInputSchema: $ref cycles", () => {
  it("rejects a $ref that reaches itself without descending into the value (it would recurse forever)", () => {
    const self = { type: "object", $defs: { a: { $ref: "#/$defs/a" } }, properties: { x: { $ref: "#/$defs/a" } } }
    expect(failure(self)).toContain(`"#/$defs/a"`)
    expect(failure(self)).toContain("without descending into a property or an array item")
  })
  it("through anyOf / allOf / oneOf, sibling keywords and pointers below a definition too", () => {
    const viaApplicators = {
      type: "object",
      $defs: {
        a: { anyOf: [{ type: "string" }, { $ref: "#/$defs/b" }] },
        b: { allOf: [{ oneOf: [{ $ref: "#/$defs/a" }] }] }
      },
      properties: { x: { $ref: "#/$defs/a" } }
    }
    expect(failure(viaApplicators)).toContain(`"#/$defs/b"`)
    const pointer = {
      type: "object",
      $defs: { o: { type: "object", properties: { v: { $ref: "#/$defs/o/properties/v" } } } },
      properties: { x: { $ref: "#/$defs/o" } }
    }
    expect(failure(pointer)).toContain(`"#/$defs/o/properties/v"`)
  })
  it("recursion through properties and items (a tree) is accepted", () => {
    const tree = {
      type: "object",
      $defs: {
        node: {
          type: "object",
          properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
          required: ["label"]
        }
      },
      properties: { root: { $ref: "#/$defs/node" } }
    }
    expect(accepts(tree, { root: { label: "a", children: [{ label: "b", children: [{ label: "c" }] }] } })).toBe(true)
    expect(accepts(tree, { root: { label: "a", children: [{ children: [] }] } })).toBe(false)
    const json = {
      type: "object",
      $defs: {
        json: {
          anyOf: [
            { type: ["null", "boolean", "number", "string"] },
            { type: "array", items: { $ref: "#/$defs/json" } },
            { type: "object", additionalProperties: { $ref: "#/$defs/json" } }
          ]
        }
      },
      properties: { value: { $ref: "#/$defs/json" } }
    }
    expect(accepts(json, { value: { a: [1, "x", null, { b: [true] }] } })).toBe(true)
  })
})

describe("compileInputSchema: the cost of checking is bounded", () => {
  /** `d_i` is "d_{i+1}, or an array of d_{i+1}": checking N-deep arrays tries 2^N paths. */
  const branching = (n: number): Record<string, unknown> => {
    const defs: Record<string, unknown> = { [`d_${n}`]: { type: "string" } }
    for (let i = 0; i < n; i++) {
      defs[`d_${i}`] = {
        anyOf: [{ $ref: `#/$defs/d_${i + 1}` }, { type: "array", items: { $ref: `#/$defs/d_${i + 1}` } }]
      }
    }
    return { type: "object", $defs: defs, properties: { a: { $ref: "#/$defs/d_0" } } }
  }
  /**
   * `nested(depth, leaf)` under `{ a: ... }`, every object and array counting each read of it (a property, its keys):
   * any checking work, the cost guard's or the check's own, reads the args. Past `budget` reads a read throws, so a
   * check that expands the paths fails at once instead of running for minutes.
   */
  const countingReads = (depth: number, leaf: unknown, budget: number) => {
    const counter = { reads: 0 }
    const read = (): void => {
      if (++counter.reads > budget) throw new Error(`the args were read more than ${budget} times`)
    }
    const counting = <T extends object>(target: T): T =>
      new Proxy(target, {
        get: (t, key, receiver) => (read(), Reflect.get(t, key, receiver)),
        ownKeys: (t) => (read(), Reflect.ownKeys(t))
      })
    let value = leaf
    for (let i = 0; i < depth; i++) value = counting([value])
    return { args: counting({ a: value }), counter }
  }
  it("args whose check would take exponential time are refused as too costly, within the step budget (N=22 took 13 s)", () => {
    // A count, not a clock: the guard's reads grow with the steps it counts (it stops at `maxSteps`), and it refuses
    // before the check expands any path, so the refusal reads the args some 270,000 times here, the same on any
    // machine; expanding 2^22 or 2^30 paths would read them millions or billions of times.
    for (const [n, leaf] of [
      [22, 1],
      [30, "s"]
    ] as const) {
      const { args, counter } = countingReads(n, leaf, InputSchemaLimits.maxSteps)
      expect(refusal(branching(n), args)).toContain("too costly to check")
      expect(counter.reads).toBeGreaterThan(0)
      expect(counter.reads).toBeLessThanOrEqual(InputSchemaLimits.maxSteps)
    }
  })
  it("counting stops at the budget; args that need little work cost little", () => {
    const graph = schemaGraph(branching(30))
    expect(checkingCost(graph, { a: nested(30, 1) }, { maxSteps: 1000, maxDepth: 1000 })).toBe("too costly")
    expect(checkingCost(graph, { a: "s" }, InputSchemaLimits)).toBeLessThan(1000)
    expect(checkingCost(graph, { a: nested(30, 1) }, { maxSteps: Infinity, maxDepth: 20 })).toBe("too deep")
  })
  it("args nested too deeply to check are refused, not a stack overflow", () => {
    const list = {
      type: "object",
      $defs: { l: { type: "array", items: { $ref: "#/$defs/l" } } },
      properties: { a: { $ref: "#/$defs/l" } }
    }
    expect(refusal(list, { a: nested(5000, "x") })).toContain("nested too deeply to check")
    expect(refusal(list, { a: nested(50, []) })).toBe("accepted")
  })
  it("ordinary schemas stay usable on large args", () => {
    const small = branching(3)
    expect(refusal(small, { a: nested(3, "s") })).toBe("accepted")
    expect(refusal(small, { a: nested(3, 1) })).not.toContain("too costly")
    const list = {
      type: "object",
      properties: { xs: { type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } } }
    }
    expect(refusal(list, { xs: Array.from({ length: 10_000 }, (_, i) => (i % 2 === 0 ? i : String(i))) })).toBe(
      "accepted"
    )
  })
})
