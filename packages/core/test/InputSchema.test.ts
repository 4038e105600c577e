import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { compileInputSchema } from "../src/InputSchema.ts"
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
    expect(failure({ type: "object", properties: { a: { items: [{ type: 3 }] } } })).toContain("input_schema.properties.a.items[0].type: 3")
    expect(failure({ type: "string" })).toBe(`input_schema: the args are an object, but "type" is "string"`)
    expect(failure({ type: "object", properties: { a: { $ref: "#/$defs/nope" } } })).toContain(`Missing definition "nope"`)
  })
  it("a property named type is a property, not a keyword", () => {
    expect(accepts({ type: "object", properties: { type: { type: "string" } } }, { type: "x" })).toBe(true)
  })
  it("patterns are not run (a declared regular expression could be catastrophic)", () => {
    expect(accepts({ type: "object", properties: { a: { type: "string", pattern: "^(a+)+$" } } }, { a: "b" })).toBe(true)
  })
})

describe("combineTools with input_schema", () => {
  it("a declaration with an unusable input_schema is rejected with why; the extension's other tools stay", () => {
    const out = combineTools([], [{
      name: "x",
      value: {
        tools: [
          { name: "ok", description: "", input_schema: { type: "object" } },
          { name: "bad", description: "", input_schema: { type: "array" } }
        ]
      }
    }])
    expect(out.accepted.map((a) => a.tool.name)).toEqual(["ok"])
    expect(out.rejected).toEqual([
      { name: "bad", extensions: ["x"], reason: "input_schema", detail: `input_schema: the args are an object, but "type" is "array"` }
    ])
  })
})
