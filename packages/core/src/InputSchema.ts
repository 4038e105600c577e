import { isJsonObject } from "@abhed/protocol"
import { JsonSchema, Result, type Schema, SchemaRepresentation } from "effect"

/**
 * A tool's declared `input_schema` (JSON Schema, draft 2020-12; earlier drafts' common keywords read the same) as
 * an Effect Schema the model's args can be validated with. A schema that cannot be compiled (not an object
 * schema, an unsupported keyword, a reference that resolves nowhere) is an error that says why: the host rejects
 * that declaration (DESIGN §3 list_tools), since args it cannot check must not reach the tool.
 *
 * `pattern` keywords are ignored: a declared regular expression is not run against the model's args (an extension's
 * pattern could be catastrophic to match); the extension still sees the args and may refuse them itself.
 */
const Types: ReadonlySet<unknown> = new Set(["string", "number", "integer", "boolean", "array", "object", "null"])

/**
 * The importer assumes a valid document (it does not check the meta-schema), so a misspelt `type` would import as
 * "anything goes". This walks the subschema positions and checks every `type`, naming the first bad one's path.
 */
const badType = (schema: unknown, path: string): string | undefined => {
  if (!isJsonObject(schema)) return undefined
  const type = schema["type"]
  if (type !== undefined && !(Types.has(type) || (Array.isArray(type) && type.length > 0 && type.every((t) => Types.has(t))))) {
    return `${path}.type: ${JSON.stringify(type)} is not a JSON Schema type (string, number, integer, boolean, array, object, null)`
  }
  const children: Array<readonly [unknown, string]> = []
  for (const key of ["properties", "patternProperties", "$defs", "definitions"]) {
    const group = schema[key]
    if (isJsonObject(group)) for (const [name, child] of Object.entries(group)) children.push([child, `${path}.${key}.${name}`])
  }
  for (const key of ["items", "additionalProperties", "not", "contains", "propertyNames"]) children.push([schema[key], `${path}.${key}`])
  for (const key of ["prefixItems", "anyOf", "oneOf", "allOf", "items"]) {
    const list = schema[key]
    if (Array.isArray(list)) list.forEach((child, i) => children.push([child, `${path}.${key}[${i}]`]))
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
  const bad = badType(inputSchema, "input_schema")
  if (bad !== undefined) return Result.fail(bad)
  // Args are always a JSON object: a root `type` must allow one (no `type` at all, as in `{}`, allows anything).
  const root = inputSchema["type"]
  if (root !== undefined && root !== "object" && !(Array.isArray(root) && root.includes("object"))) {
    return Result.fail(`input_schema: the args are an object, but "type" is ${JSON.stringify(root)}`)
  }
  try {
    const document = JsonSchema.fromSchemaDraft2020_12({ ...inputSchema })
    // An imported schema is made of built-in schemas and checks: it needs no services to decode.
    const schema = SchemaRepresentation.fromJsonSchemaDocument(document, { patterns: "ignore" })
    return Result.succeed(schema as Schema.Codec<unknown, unknown>)
  } catch (e) {
    return Result.fail(`input_schema is not usable: ${e instanceof Error ? e.message : String(e)}`)
  }
}
