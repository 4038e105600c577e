import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as fc from "fast-check"
import { readFileSync } from "node:fs"
import { schemaPath } from "../scripts/gen-config-schema.ts"
import { ConfigFile, configJsonSchema, configJsonSchemaText, decodeConfig, EventNames } from "../src/index.ts"

describe("docs/abhed.schema.json", () => {
  it("is up to date with the ConfigFile Schema (run `pnpm gen:schema` if this fails)", () => {
    const checkedIn = readFileSync(schemaPath, "utf8")
    expect(
      checkedIn === configJsonSchemaText(),
      "docs/abhed.schema.json is out of date with packages/protocol/src/ConfigSchema.ts: run `pnpm gen:schema` and commit the result"
    ).toBe(true)
  })

  it("is a standalone draft 2020-12 document that forbids unknown keys", () => {
    const doc = configJsonSchema()
    expect(doc.$schema).toBe("https://json-schema.org/draft/2020-12/schema")
    expect(doc.additionalProperties).toBe(false)
    // Every $ref points into its own $defs.
    const text = JSON.stringify(doc)
    const defs = doc.$defs
    for (const [, name] of text.matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g)) {
      expect(typeof defs === "object" && defs !== null && name !== undefined && Object.hasOwn(defs, name)).toBe(true)
    }
  })

  it("describes every property, so editors can show help on hover", () => {
    const undescribed: Array<string> = []
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}[${i}]`))
      if (typeof node !== "object" || node === null) return
      const props: unknown = Reflect.get(node, "properties")
      if (typeof props === "object" && props !== null) {
        for (const [key, schema] of Object.entries(props)) {
          const described = typeof schema === "object" && schema !== null &&
            (typeof Reflect.get(schema, "description") === "string" || typeof Reflect.get(schema, "$ref") === "string")
          if (!described) undescribed.push(`${path}.${key}`)
        }
      }
      for (const [key, value] of Object.entries(node)) walk(value, `${path}.${key}`)
    }
    walk(configJsonSchema(), "$")
    expect(undescribed).toEqual([])
  })
})

/**
 * The friendly decoder and the Schema (which the editors' JSON Schema comes from) must accept exactly the same
 * files; otherwise an editor would flag a file Abhed accepts, or pass one Abhed rejects.
 */
describe("decodeConfig agrees with the ConfigFile Schema", () => {
  const junk = fc.constantFrom<unknown>(null, true, 0, -1, -0, 1.5, 1e300, "", "x", [], {}, ["x"], { a: 1 })
  /** Files with problems sprinkled in (`noisy`), or files built from valid parts only (mostly accepted). */
  const configOf = (noisy: boolean) => {
    const maybe = <A>(arb: fc.Arbitrary<A>): fc.Arbitrary<unknown> =>
      noisy ? fc.oneof({ weight: 30, arbitrary: arb }, { weight: 1, arbitrary: junk }) : arb
    // Sparse noise, so that files with exactly one problem (the interesting ones) are common.
    const pick = <A>(valid: ReadonlyArray<A>, invalid: ReadonlyArray<A>) =>
      noisy && invalid.length > 0
        ? fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...valid) }, { weight: 1, arbitrary: fc.constantFrom(...invalid) })
        : fc.constantFrom(...valid)
    const withExtraKey = (arb: fc.Arbitrary<Record<string, unknown>>, extra: ReadonlyArray<string>) =>
      noisy
        ? fc.tuple(arb, fc.option(fc.constantFrom(...extra), { freq: 20 })).map(([o, key]) =>
          key === null ? o : { ...o, [key]: 1 }
        )
        : arb
    const edges = [-1, 0, -0, 0.5, 2 ** 53, 1e300]
    const int = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1, max: 20_000 }) }, {
      weight: noisy ? 1 : 0,
      arbitrary: fc.constantFrom(...edges)
    })
    const nat = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 20_000 }) }, {
      weight: noisy ? 1 : 0,
      arbitrary: fc.constantFrom(...edges)
    })
    const name = pick(["guard", "audit", "a.b_c-1", "0x", "Guard", "policy2"], ["policy", "my guard", "-x", "", "é"])
    const extension = withExtraKey(
      fc.record({
        name: maybe(name),
        command: maybe(pick(["bash", "./x.sh"], [""])),
        args: maybe(fc.array(maybe(fc.string()), { maxLength: 3 })),
        events: maybe(fc.uniqueArray(maybe(pick(EventNames, ["tool_calls"])), { maxLength: 3 })),
        timeout_ms: maybe(int),
        startup_timeout_ms: maybe(int),
        grace_ms: maybe(nat),
        on_failure: maybe(pick(["ignore", "ask", "deny"], ["block"])),
        cwd: maybe(pick([".", "ext"], [""])),
        env: maybe(fc.dictionary(pick(["A", "PATH"], ["A=B", ""]), maybe(fc.string()), { maxKeys: 3 }))
      }, { requiredKeys: noisy ? [] : ["name", "command"] }),
      ["timeout", "allow", "$schema"]
    )
    const rule = withExtraKey(
      fc.record({
        tool: maybe(pick(["bash", "*"], [""])),
        args: maybe(fc.dictionary(fc.constantFrom("command", "path", ""), maybe(fc.string()), { maxKeys: 2 })),
        reason: maybe(fc.string())
      }, { requiredKeys: noisy ? [] : ["tool"] }),
      ["arg"]
    )
    const rules = maybe(fc.array(maybe(rule), { maxLength: 2 }))
    const policy = withExtraKey(
      fc.record({ deny: rules, ask: rules, allow: rules, default: maybe(pick(["allow", "ask", "deny"], ["x"])) }, {
        requiredKeys: []
      }),
      ["alow"]
    )
    return withExtraKey(
      fc.record({
        $schema: maybe(fc.constant("./abhed.schema.json")),
        extensions: maybe(fc.array(maybe(extension), { maxLength: 3 })),
        policy: maybe(policy),
        max_rewrite_rounds: maybe(int),
        builtin_tools: maybe(fc.uniqueArray(maybe(pick(["bash", "read"], [""])), { maxLength: 3 }))
      }, { requiredKeys: [] }),
      ["extension", "policies"]
    )
  }
  // A valid-ish file with exactly one targeted change somewhere: the files that tell two validators apart.
  type Path = ReadonlyArray<string | number>
  const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
  const allPaths = (v: unknown, at: Path = []): Array<Path> =>
    Array.isArray(v)
      ? [at, ...v.flatMap((x, i) => allPaths(x, [...at, i]))]
      : isObject(v)
      ? [at, ...Object.keys(v).flatMap((k) => allPaths(v[k], [...at, k]))]
      : [at]
  const update = (v: unknown, path: Path, f: (u: unknown) => unknown): unknown => {
    const [head, ...rest] = path
    if (head === undefined) return f(v)
    if (Array.isArray(v)) return v.map((x, i) => (i === head ? update(x, rest, f) : x))
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === head ? update(x, rest, f) : x]))
    return v
  }
  const values = fc.oneof(
    junk,
    fc.constantFrom<unknown>("policy", "tool_calls", "tool_call", "block", "Deny", "my guard", "guard", "bash", 2 ** 53)
  )
  const keys = fc.constantFrom("A=B", "", "timeout", "allow", "PATH", "name", "tool", "x")
  const mutation = fc.oneof(
    values.map((value) => (_: unknown) => value),
    fc.tuple(keys, values).map(([key, value]) => (u: unknown) => (isObject(u) ? { ...u, [key]: value } : u)),
    keys.map((key) => (u: unknown) => {
      if (!isObject(u)) return u
      const [first, ...others] = Object.entries(u)
      return first === undefined ? u : Object.fromEntries([[key, first[1]], ...others])
    }),
    values.map((value) => (u: unknown) => (Array.isArray(u) ? [...u, value] : u)),
    fc.constant((u: unknown) => (Array.isArray(u) && u.length > 0 ? [...u, u[0]] : u))
  )
  const mutated = fc.tuple(configOf(false), fc.nat(), mutation).map(([file, n, f]) => {
    const paths = allPaths(file)
    return update(file, paths[n % paths.length] ?? [], f)
  })
  const config = fc.oneof(configOf(true), configOf(false), mutated)
  const schemaAccepts = (input: unknown) =>
    Result.isSuccess(Schema.decodeUnknownResult(ConfigFile)(input, { onExcessProperty: "error" }))

  it("on generated near-valid and invalid files (property)", () => {
    let accepted = 0
    fc.assert(
      fc.property(config, (input) => {
        const ours = Result.isSuccess(decodeConfig(input))
        if (ours) accepted++
        expect({ input, ours }).toEqual({ input, ours: schemaAccepts(input) })
      }),
      { numRuns: 3000 }
    )
    // The generator must exercise both sides, or the property says little.
    expect(accepted).toBeGreaterThan(600)
    expect(accepted).toBeLessThan(2400)
  })

  it("on every single-point change of a file that uses every key (exhaustive)", () => {
    const full = {
      $schema: "./abhed.schema.json",
      extensions: [{
        name: "guard",
        command: "bash",
        args: ["guard.sh"],
        events: ["tool_call", "tool_result"],
        timeout_ms: 5000,
        startup_timeout_ms: 10000,
        grace_ms: 0,
        on_failure: "ask",
        cwd: ".",
        env: { K: "V" }
      }, { name: "audit", command: "./audit.sh" }],
      policy: {
        deny: [{ tool: "bash", args: { command: "rm -rf *" }, reason: "no" }],
        ask: [{ tool: "write" }],
        allow: [{ tool: "read", args: {} }],
        default: "allow"
      },
      max_rewrite_rounds: 4,
      builtin_tools: ["bash", "read"]
    }
    const pool: ReadonlyArray<unknown> = [
      -1, 0, -0, 0.5, 1, 2 ** 53, "", "x", null, true, [], {}, ["x"], { a: 1 },
      "policy", "tool_calls", "tool_call", "block", "deny", "my guard", "guard", "bash"
    ]
    const keyPool = ["A=B", "", "timeout", "allow", "PATH", "name", "tool", "x"]
    const variants: Array<unknown> = [full]
    for (const path of allPaths(full)) {
      for (const value of pool) variants.push(update(full, path, () => value))
      for (const key of keyPool) {
        variants.push(update(full, path, (u) => (isObject(u) ? { ...u, [key]: "V" } : u)))
        variants.push(update(full, path, (u) => {
          if (!isObject(u)) return u
          const [first, ...others] = Object.entries(u)
          return first === undefined ? u : Object.fromEntries([[key, first[1]], ...others])
        }))
      }
      variants.push(update(full, path, (u) => (Array.isArray(u) && u.length > 0 ? [...u, u[0]] : u)))
      variants.push(update(full, path, (u) => (Array.isArray(u) ? [] : u)))
    }
    const disagreements = variants.filter((v) => Result.isSuccess(decodeConfig(v)) !== schemaAccepts(v))
    expect(disagreements).toEqual([])
    expect(variants.length).toBeGreaterThan(1000)
  })

  it("on the documented example", () => {
    const example = {
      extensions: [{
        name: "guard",
        command: "bash",
        args: ["guard.sh"],
        events: ["tool_call"],
        timeout_ms: 5000,
        on_failure: "ignore",
        cwd: ".",
        env: { K: "V" }
      }],
      policy: { deny: [{ tool: "bash", args: { command: "rm -rf *" } }], ask: [], allow: [], default: "allow" },
      max_rewrite_rounds: 4,
      builtin_tools: ["bash", "read", "write"]
    }
    expect(Result.isSuccess(decodeConfig(example))).toBe(true)
    expect(schemaAccepts(example)).toBe(true)
  })
})
