import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as fc from "fast-check"
import { readFileSync } from "node:fs"
import { schemaPath } from "../scripts/gen-config-schema.ts"
import { renderPath, schemaProblems } from "../src/ConfigIssues.ts"
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

  it("states as `default` exactly what decoding gives a key left out (one statement of each default)", () => {
    const doc = JSON.parse(configJsonSchemaText())
    const decode = Schema.decodeUnknownSync(ConfigFile)
    const empty = decode({})
    const items = decode({ extensions: [{ name: "x", command: "x" }], policy: { deny: [{ tool: "x" }] } })
    const places: ReadonlyArray<[Record<string, { default?: unknown }>, Record<string, unknown>]> = [
      [doc.properties, empty],
      [doc.properties.policy.properties, empty.policy],
      [doc.$defs.Extension.properties, items.extensions[0] ?? {}],
      [doc.$defs.PolicyRule.properties, items.policy.deny[0] ?? {}]
    ]
    let stated = 0
    for (const [properties, value] of places) {
      for (const [key, property] of Object.entries(properties)) {
        if (!Object.hasOwn(property, "default")) continue
        stated++
        expect([key, value[key]]).toEqual([key, property.default])
      }
    }
    expect(stated).toBe(17)
  })

  it("describes every property, so editors can show help on hover", () => {
    const undescribed: Array<string> = []
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}[${i}]`))
      if (typeof node !== "object" || node === null) return
      const props: unknown = Reflect.get(node, "properties")
      if (typeof props === "object" && props !== null) {
        for (const [key, schema] of Object.entries(props)) {
          const described =
            typeof schema === "object" &&
            schema !== null &&
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
 * The Schema is the one statement of the config; `decodeConfig` words its issues (ConfigIssues.ts). Whatever the
 * file, every problem the Schema finds must come out as a line a person can act on: at a path that is really in
 * the file (or, for a missing key, in an object that is), in our words rather than effect's defaults, and none
 * lost (a rejected file always gets at least one issue; an accepted one none).
 */
describe("the formatter over the ConfigFile Schema's issues", () => {
  const junk = fc.constantFrom<unknown>(null, true, 0, -1, -0, 1.5, 1e300, "", "x", [], {}, ["x"], { a: 1 })
  /** Files with problems sprinkled in (`noisy`), or files built from valid parts only (mostly accepted). */
  const configOf = (noisy: boolean) => {
    const maybe = <A>(arb: fc.Arbitrary<A>): fc.Arbitrary<unknown> =>
      noisy ? fc.oneof({ weight: 30, arbitrary: arb }, { weight: 1, arbitrary: junk }) : arb
    // Sparse noise, so that files with exactly one problem (the interesting ones) are common.
    const pick = <A>(valid: ReadonlyArray<A>, invalid: ReadonlyArray<A>) =>
      noisy && invalid.length > 0
        ? fc.oneof(
            { weight: 8, arbitrary: fc.constantFrom(...valid) },
            { weight: 1, arbitrary: fc.constantFrom(...invalid) }
          )
        : fc.constantFrom(...valid)
    const withExtraKey = (arb: fc.Arbitrary<Record<string, unknown>>, extra: ReadonlyArray<string>) =>
      noisy
        ? fc
            .tuple(arb, fc.option(fc.constantFrom(...extra), { freq: 20 }))
            .map(([o, key]) => (key === null ? o : { ...o, [key]: 1 }))
        : arb
    const edges = [-1, 0, -0, 0.5, 2 ** 53, 1e300]
    const int = fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 1, max: 20_000 }) },
      {
        weight: noisy ? 1 : 0,
        arbitrary: fc.constantFrom(...edges)
      }
    )
    const nat = fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: 20_000 }) },
      {
        weight: noisy ? 1 : 0,
        arbitrary: fc.constantFrom(...edges)
      }
    )
    const name = pick(["guard", "audit", "a.b_c-1", "0x", "Guard", "policy2"], ["policy", "my guard", "-x", "", "é"])
    const extension = withExtraKey(
      fc.record(
        {
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
        },
        { requiredKeys: noisy ? [] : ["name", "command"] }
      ),
      ["timeout", "allow", "$schema"]
    )
    const rule = withExtraKey(
      fc.record(
        {
          tool: maybe(pick(["bash", "*"], [""])),
          args: maybe(fc.dictionary(fc.constantFrom("command", "path", ""), maybe(fc.string()), { maxKeys: 2 })),
          reason: maybe(fc.string())
        },
        { requiredKeys: noisy ? [] : ["tool"] }
      ),
      ["arg"]
    )
    const rules = maybe(fc.array(maybe(rule), { maxLength: 2 }))
    const policy = withExtraKey(
      fc.record(
        { deny: rules, ask: rules, allow: rules, default: maybe(pick(["allow", "ask", "deny"], ["x"])) },
        {
          requiredKeys: []
        }
      ),
      ["alow"]
    )
    return withExtraKey(
      fc.record(
        {
          $schema: maybe(fc.constant("./abhed.schema.json")),
          extensions: maybe(fc.array(maybe(extension), { maxLength: 3 })),
          policy: maybe(policy),
          max_rewrite_rounds: maybe(int),
          builtin_tools: maybe(fc.uniqueArray(maybe(pick(["bash", "read"], [""])), { maxLength: 3 }))
        },
        { requiredKeys: [] }
      ),
      ["extension", "policies"]
    )
  }
  // A valid-ish file with exactly one targeted change somewhere: the files that tell two validators apart.
  type Path = ReadonlyArray<string | number>
  const isObject = (u: unknown): u is Record<string, unknown> =>
    typeof u === "object" && u !== null && !Array.isArray(u)
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
    if (isObject(v))
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === head ? update(x, rest, f) : x]))
    return v
  }
  const values = fc.oneof(
    junk,
    fc.constantFrom<unknown>("policy", "tool_calls", "tool_call", "block", "Deny", "my guard", "guard", "bash", 2 ** 53)
  )
  const keys = fc.constantFrom("A=B", "", "timeout", "allow", "PATH", "name", "tool", "x")
  const mutation = fc.oneof(
    values.map((value) => (_: unknown) => value),
    fc.tuple(keys, values).map(
      ([key, value]) =>
        (u: unknown) =>
          isObject(u) ? { ...u, [key]: value } : u
    ),
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
  const decodeOptions = { errors: "all", onExcessProperty: "error", reportInput: true } as const
  const has = (u: unknown, path: ReadonlyArray<PropertyKey>): boolean => {
    const [head, ...rest] = path
    if (head === undefined) return true
    if (Array.isArray(u)) return typeof head === "number" && head < u.length && has(u[head], rest)
    return isObject(u) && typeof head === "string" && Object.hasOwn(u, head) && has(u[head], rest)
  }
  // effect's default wording, which must never reach a user of abhed.json
  const effectWords = /Expected|<filter>|a valid value|Missing key|Invalid data|Unexpected key|\bgot undefined/
  const decodeFile = Schema.decodeUnknownResult(ConfigFile)
  /**
   * The failures of the property, as data (empty when the formatter did its job on this input). `ours` is
   * `decodeConfig(input)`, when the caller has it already.
   */
  const formatterFaults = (input: unknown, ours = decodeConfig(input)): ReadonlyArray<string> => {
    const decoded = decodeFile(input, decodeOptions)
    if (Result.isSuccess(decoded))
      return Result.isSuccess(ours) ? [] : ["accepted by the Schema, rejected by decodeConfig"]
    if (Result.isSuccess(ours)) return ["rejected by the Schema, accepted by decodeConfig"]
    const problems = schemaProblems(decoded.failure.issue)
    if (problems.length === 0) return ["a rejected file with no issue"]
    if (ours.failure.issues.length !== problems.length) return ["decodeConfig lost or added issues"]
    return problems.flatMap((p) => [
      ...(has(input, p.missingKey ? p.path.slice(0, -1) : p.path) ? [] : [`${renderPath(p.path)}: not in the file`]),
      ...(p.missingKey && has(input, p.path) ? [`${renderPath(p.path)}: "missing" but present`] : []),
      ...(effectWords.test(p.message) || p.message === "" ? [`${renderPath(p.path)}: ${p.message}`] : [])
    ])
  }

  it("on generated near-valid and invalid files (property)", () => {
    let accepted = 0
    fc.assert(
      fc.property(config, (input) => {
        // One decode answers both questions: accepted, and worded as it should be.
        const ours = decodeConfig(input)
        if (Result.isSuccess(ours)) accepted++
        expect({ input, faults: formatterFaults(input, ours) }).toEqual({ input, faults: [] })
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
      extensions: [
        {
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
        },
        { name: "audit", command: "./audit.sh" }
      ],
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
      -1,
      0,
      -0,
      0.5,
      1,
      2 ** 53,
      "",
      "x",
      null,
      true,
      [],
      {},
      ["x"],
      { a: 1 },
      "policy",
      "tool_calls",
      "tool_call",
      "block",
      "deny",
      "my guard",
      "guard",
      "bash"
    ]
    const keyPool = ["A=B", "", "timeout", "allow", "PATH", "name", "tool", "x"]
    const variants: Array<unknown> = [full]
    for (const path of allPaths(full)) {
      for (const value of pool) variants.push(update(full, path, () => value))
      for (const key of keyPool) {
        variants.push(update(full, path, (u) => (isObject(u) ? { ...u, [key]: "V" } : u)))
        variants.push(
          update(full, path, (u) => {
            if (!isObject(u)) return u
            const [first, ...others] = Object.entries(u)
            return first === undefined ? u : Object.fromEntries([[key, first[1]], ...others])
          })
        )
      }
      variants.push(update(full, path, (u) => (Array.isArray(u) && u.length > 0 ? [...u, u[0]] : u)))
      variants.push(update(full, path, (u) => (Array.isArray(u) ? [] : u)))
    }
    const faults = variants.flatMap((v) => formatterFaults(v).map((fault) => ({ v, fault })))
    expect(faults).toEqual([])
    expect(variants.length).toBeGreaterThan(1000)
  })

  it("on the documented example", () => {
    const example = {
      extensions: [
        {
          name: "guard",
          command: "bash",
          args: ["guard.sh"],
          events: ["tool_call"],
          timeout_ms: 5000,
          on_failure: "ignore",
          cwd: ".",
          env: { K: "V" }
        }
      ],
      policy: { deny: [{ tool: "bash", args: { command: "rm -rf *" } }], ask: [], allow: [], default: "allow" },
      max_rewrite_rounds: 4,
      builtin_tools: ["bash", "read", "write"]
    }
    expect(Result.isSuccess(decodeConfig(example))).toBe(true)
    expect(formatterFaults(example)).toEqual([])
  })
})
