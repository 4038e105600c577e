import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  canonicalJson,
  jsonEquals,
  MaxJsonDepth,
  nestedDeeperThan,
  previewJson,
  shapeJson,
  unsendableField
} from "../src/index.ts"

describe("canonicalJson", () => {
  it("keeps a `__proto__` key (JSON.parse makes it an own key; assigning it must not set a prototype)", () => {
    const value: unknown = JSON.parse(`{"b":1,"__proto__":{"rm":"-rf /"},"a":"x"}`)
    expect(canonicalJson(value)).toBe(`{"__proto__":{"rm":"-rf /"},"a":"x","b":1}`)
    expect(canonicalJson(JSON.parse(`{"__proto__":"rm -rf /"}`))).toBe(`{"__proto__":"rm -rf /"}`)
  })
  it("values that differ only in a `__proto__` key have different texts", () => {
    const a: unknown = JSON.parse(`{"__proto__":{"x":1}}`)
    expect(jsonEquals(a, {})).toBe(false)
    expect(canonicalJson(a)).not.toBe(canonicalJson({}))
  })
})

describe("unsendableField", () => {
  const nest = (depth: number, leaf: unknown = 1): unknown => {
    let v: unknown = leaf
    for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { x: v } : [v]
    return v
  }
  it("a field may nest MaxJsonDepth - 1 levels: then the request (and a reply echoing it) nests MaxJsonDepth", () => {
    expect(unsendableField("args", nest(MaxJsonDepth - 1))).toBeUndefined()
    expect(unsendableField("args", nest(MaxJsonDepth))).toBe(
      "args nested too deep (a request may nest at most 256 levels)"
    )
    // The reply limit agrees: an extension that echoes the deepest sendable args back is not malformed.
    expect(nestedDeeperThan({ args: nest(MaxJsonDepth - 1) }, MaxJsonDepth)).toBe(false)
  })
  it("never overflows the stack, however deep; a cycle is too deep; a BigInt is not JSON", () => {
    expect(unsendableField("messages", nest(1_000_000))).toMatch(/^messages nested too deep/)
    const cycle: Record<string, unknown> = {}
    cycle["self"] = cycle
    expect(unsendableField("args", cycle)).toMatch(/^args nested too deep/)
    expect(unsendableField("args", { n: [1, { big: BigInt(1) }] })).toBe("args holds a BigInt, which JSON cannot carry")
    expect(unsendableField("args", { a: "x", b: [1, null, true, { c: [] }] })).toBeUndefined()
  })
  it("property: unsendable exactly when deeper than MaxJsonDepth - 1", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 600 }), (depth) => {
        expect(unsendableField("args", nest(depth)) !== undefined).toBe(depth > MaxJsonDepth - 1)
      }),
      { numRuns: 1000 }
    )
  })
})

describe("shapeJson", () => {
  it("shows strings by their length, numbers as <number>, keys by their length unless the protocol's own, at any depth", () => {
    const secret = "aws_secret_access_key=AKIAABCDEFGHIJKLMNOP"
    const text = shapeJson({ debug: secret, n: 1, ok: true, none: null, nested: [{ content: secret }] }, 200)
    expect(text).toBe(
      `{"<5 chars>":"<42 chars>","<1 chars>":"<number>","<2 chars>":true,"<4 chars>":null,"<6 chars>":[{"content":"<42 chars>"}]}`
    )
    expect(text).not.toContain("AKIA")
    expect(shapeJson(secret, 200)).toBe(`"<42 chars>"`)
  })

  it("hides a secret held as a key or a number, and keeps keys that read alike apart", () => {
    const text = shapeJson(
      { "sk-live-4eC39HqLyjWDarjtT1zdp7dc": 4111111111111111, "sk-live-4eC39HqLyjWDarjtT1zdp7dd": "x" },
      200
    )
    expect(text).toBe(`{"<32 chars>":"<number>","<32 chars>#2":"<1 chars>"}`)
    expect(text).not.toContain("sk-live")
    expect(text).not.toContain("4111")
  })

  it("keeps the strings the caller knows to be harmless, by key, at the top only", () => {
    expect(shapeJson({ id: "7", reason: "stray" }, 200, (key) => key === "id")).toBe(`{"id":"7","reason":"<5 chars>"}`)
    // An `id` inside a payload is the payload's: hidden like any string.
    expect(
      shapeJson({ id: "7", args: { user: { id: "hunter2" } }, env: [{ id: "AKIA1234" }] }, 200, (key) => key === "id")
    ).toBe(`{"id":"7","args":{"<4 chars>":{"id":"<7 chars>"}},"<3 chars>":[{"id":"<8 chars>"}]}`)
  })
})

describe("previewJson", () => {
  it("shows JSON, cut to the length asked for", () => {
    expect(previewJson({ a: 1 }, 80)).toBe(`{"a":1}`)
    expect(previewJson("x".repeat(100), 10)).toBe(`"xxxxxx...`)
    expect(previewJson("x".repeat(100), 10)).toHaveLength(10)
  })

  it("never throws nor overflows the stack: deep values, cycles, BigInts, throwing getters, non-JSON values", () => {
    let deep: unknown = 0
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(previewJson(deep, 200)).toBe(`(JSON nested more than ${MaxJsonDepth} levels deep)`)
    const cycle: { self?: unknown } = {}
    cycle.self = cycle
    expect(previewJson(cycle, 200)).toBe(`(JSON nested more than ${MaxJsonDepth} levels deep)`)
    expect(previewJson(7n, 80)).toBe("7n")
    expect(previewJson({ id: 7n }, 80)).toBe(`{"id":"7n"}`)
    const getter = Object.defineProperty({}, "x", {
      enumerable: true,
      get: () => {
        throw new Error("no")
      }
    })
    expect(previewJson(getter, 80)).toBe("(a value JSON cannot show)")
    expect(previewJson(undefined, 80)).toBe("undefined")
  })
})
