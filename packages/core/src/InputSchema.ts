import { isJsonObject, jsonProblem, MaxJsonDepth } from "@abhed/protocol"
import { JsonSchema, Result, Schema, SchemaRepresentation } from "effect"
import { checkingCost, type SchemaGraph, sameValueCycle, schemaGraph, subschemas } from "./InputSchemaGraph.ts"

/**
 * A tool's declared `input_schema` (JSON Schema, draft 2020-12; earlier drafts' common keywords read the same) as
 * an Effect Schema the model's args can be validated with. A schema that cannot be compiled (not an object
 * schema, an unsupported keyword, a reference that resolves nowhere) is an error that says why: the host rejects
 * that declaration (docs/design.md#combination list_tools), since args it cannot check must not reach the tool.
 *
 * `pattern` keywords are ignored: a declared regular expression is not run against the model's args (an extension's
 * pattern could be catastrophic to match); the extension still sees the args and may refuse them itself.
 *
 * `$ref` is checked beyond what the importer does (InputSchemaGraph.ts). A cycle of references that never descends
 * into a property or an array item is rejected here: checking any value against it would recurse until the stack
 * overflows (a defect, not a failed check, that would end the agent's turn). And the work of checking args is
 * bounded, see `InputSchemaLimits`.
 */
const Types: ReadonlySet<unknown> = new Set(["string", "number", "integer", "boolean", "array", "object", "null"])

/**
 * The importer assumes a valid document (it does not check the meta-schema), so a misspelt `type` would import as
 * "anything goes". This walks the subschema positions (InputSchemaGraph.ts `subschemas`, and the definitions) and
 * checks every `type`, naming the first bad one's path.
 */
const badType = (schema: unknown, path: string): string | undefined => {
  if (!isJsonObject(schema)) return undefined
  const type = schema["type"]
  if (
    type !== undefined &&
    !(Types.has(type) || (Array.isArray(type) && type.length > 0 && type.every((t) => Types.has(t))))
  ) {
    return `${path}.type: ${JSON.stringify(type)} is not a JSON Schema type (string, number, integer, boolean, array, object, null)`
  }
  const children = subschemas(schema).map(([child, , at]) => [child, `${path}${at}`] as const)
  // Definitions are subschemas too, whether or not a `$ref` reaches them.
  for (const key of ["$defs", "definitions"]) {
    const group = schema[key]
    if (isJsonObject(group))
      for (const [name, child] of Object.entries(group)) children.push([child, `${path}.${key}.${name}`])
  }
  for (const [child, at] of children) {
    const found = badType(child, at)
    if (found !== undefined) return found
  }
  return undefined
}

type Compiled = Result.Result<Schema.Codec<unknown, unknown>, string>

/**
 * Compiled once per declaration: the host compiles each declared `input_schema` when it accepts the tool, and the
 * effect/ai bridge needs the same schema for the tool it offers the model (the same object reaches both).
 */
const compiled = new WeakMap<object, Compiled>()

export const compileInputSchema = (inputSchema: { readonly [key: string]: unknown }): Compiled => {
  const known = compiled.get(inputSchema)
  if (known !== undefined) return known
  const result = compile(inputSchema)
  compiled.set(inputSchema, result)
  return result
}

const compile = (inputSchema: { readonly [key: string]: unknown }): Compiled => {
  // `1e999` parses as Infinity, which the schema shown to the model would write as null: that declaration only.
  if (jsonProblem(inputSchema, MaxJsonDepth) === "nonfinite") {
    return Result.fail("input_schema holds a number JSON cannot carry (1e999 reads as Infinity)")
  }
  const bad = badType(inputSchema, "input_schema")
  if (bad !== undefined) return Result.fail(bad)
  // Args are always a JSON object: a root `type` must allow one (no `type` at all, as in `{}`, allows anything).
  const root = inputSchema["type"]
  if (root !== undefined && root !== "object" && !(Array.isArray(root) && root.includes("object"))) {
    return Result.fail(`input_schema: the args are an object, but "type" is ${JSON.stringify(root)}`)
  }
  const graph = schemaGraph(inputSchema)
  const cycle = sameValueCycle(graph)
  if (cycle !== undefined) {
    return Result.fail(
      `input_schema: $ref ${cycle.map((ref) => JSON.stringify(ref)).join(" → ")} leads back to itself without descending into a property or an array item: checking args against it would never end`
    )
  }
  try {
    const document = JsonSchema.fromSchemaDraft2020_12({ ...inputSchema })
    // An imported schema is made of built-in schemas and checks: it needs no services to decode.
    const schema = SchemaRepresentation.fromJsonSchemaDocument(document, { patterns: "ignore" })
    return Result.succeed(bounded(graph, schema as Schema.Codec<unknown, unknown>))
  } catch (e) {
    return Result.fail(`input_schema is not usable: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/**
 * Why the cost of checking args is bounded: `$ref` lets a short schema describe exponentially many ways to check one
 * value (`d_i` = "`d_{i+1}`, or an array of `d_{i+1}`" checks 22-deep arrays for 13 s), synchronously, on the agent's
 * event loop, with args any rewriting extension can supply; and values nested a few thousand levels deep overflow
 * the stack of the recursive Effect Schema check.
 *
 * A budget counted at check time, failing closed, rather than a limit on the schema alone: the blow-up depends on
 * the args as much as on the schema (a recursive schema is infinite once expanded, yet cheap for any given args),
 * and telling which recursive schemas can blow up (ambiguity through shared references, like a backtracking regular
 * expression) is a hard analysis that would either miss cases or refuse ordinary schemas. Counting is exact about
 * what matters: it stops at `maxSteps`, whatever the schema. The count over-approximates the real work (every
 * `anyOf` alternative tried), so a million steps bounds the real check to a few hundred milliseconds at worst (the
 * exponential schema above, measured), while an array of some 90,000 values, each checked against three
 * alternatives, still fits: far more than a tool call's args need. The Effect Schema check overflowed Node's default
 * stack at about 2,400 applications deep (a tree of objects); `maxDepth` keeps well away from that, and still allows
 * args nested over 150 levels deep.
 */
export const InputSchemaLimits = { maxSteps: 1_000_000, maxDepth: 512 } as const

/** `schema`, whose check first refuses args too costly (or too deeply nested) to check: before any work is done. */
const bounded = (graph: SchemaGraph, schema: Schema.Codec<unknown, unknown>): Schema.Codec<unknown, unknown> =>
  Schema.Unknown.check(
    Schema.makeFilter((args: unknown) => {
      const cost = checkingCost(graph, args, InputSchemaLimits)
      return cost === "too costly"
        ? `args too costly to check against input_schema (more than ${InputSchemaLimits.maxSteps} steps)`
        : cost === "too deep"
          ? `args nested too deeply to check against input_schema (more than ${InputSchemaLimits.maxDepth} subschemas deep)`
          : true
    })
  ).pipe(Schema.decodeTo(schema))
