import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type * as SchemaIssue from "effect/SchemaIssue"
import { isJsonObject, previewJson } from "./Json.ts"

/**
 * Wording the effect Schema's issues about `abhed.json` for people: every problem with the path it is at and the
 * fix (`extensions[1].events[0]: unknown event "tool_calls"; expected one of …; did you mean "tool_call"?`).
 * The words come from the Schema's annotations (ConfigSchema.ts): `expected`, `noun`, `messageMissingKey`, the
 * filters' messages and `duplicateOf`; this file only knows how to put them together.
 */

/** One problem, at a path into the file (keys and indexes). `missingKey`: the path names a key that is absent. */
export interface SchemaProblem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly missingKey: boolean
}

/** `extensions[1].events[0]`, `env["A=B"]`, `["my key"]`; "" for the file as a whole. */
export const renderPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, k) => {
    if (typeof k === "number") return `${out}[${k}]`
    const name = String(k)
    if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)) return out === "" ? name : `${out}.${name}`
    return `${out}[${JSON.stringify(name)}]`
  }, "")

/** A short rendering of an offending value for messages. */
const show = (u: unknown): string => {
  if (u === undefined) return "nothing"
  if (Array.isArray(u)) return "an array"
  if (isJsonObject(u)) return "an object"
  // JSON.stringify writes a number too large for a double (1e400 in the file, read as Infinity) as "null".
  return typeof u === "number" && !Number.isFinite(u) ? String(u) : previewJson(u, 60)
}

/** Levenshtein distance, for "did you mean" hints on short identifiers. */
const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

/** The closest candidate, if it is close enough to be a plausible typo (or the input is a prefix of it). */
export const closestName = (input: string, candidates: ReadonlyArray<string>): string | undefined => {
  const lower = input.toLowerCase()
  let best: { readonly candidate: string; readonly score: number } | undefined
  for (const candidate of candidates) {
    const d = distance(lower, candidate.toLowerCase())
    const prefix = lower.length >= 3 && (candidate.startsWith(lower) || lower.startsWith(candidate))
    const close = d <= Math.max(1, Math.floor(candidate.length / 3))
    if ((close || prefix) && (best === undefined || d < best.score)) best = { candidate, score: d }
  }
  return best?.candidate
}

const didYouMean = (input: string, candidates: ReadonlyArray<string>): string => {
  const hint = closestName(input, candidates)
  return hint === undefined ? "" : `; did you mean "${hint}"?`
}

const stringAnnotation = (ast: SchemaAST.AST | undefined, key: string): string | undefined => {
  const value = ast === undefined ? undefined : SchemaAST.resolve(ast)?.[key]
  return typeof value === "string" ? value : undefined
}

const defaultExpected = (ast: SchemaAST.AST | undefined): string => {
  switch (ast?._tag) {
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "true or false"
    case "Arrays":
      return "an array"
    case "Objects":
      return "an object"
    default:
      return "a valid value"
  }
}

/** `must be {expected}, got {input}`: the field's `expected` annotation; the empty string is not worth showing. */
const mustBe = (path: ReadonlyArray<PropertyKey>, ast: SchemaAST.AST | undefined, input: unknown): string => {
  const expected = stringAnnotation(ast, "expected") ?? defaultExpected(ast)
  const got = input === "" ? "" : `, got ${show(input)}`
  return `${path.length === 0 ? "the config must" : "must"} be ${expected}${got}`
}

const literalsOf = (ast: SchemaAST.Union): ReadonlyArray<string> =>
  ast.types.flatMap((t) => (SchemaAST.isLiteral(t) ? [String(t.literal)] : []))

/** A value that is none of a list of literals: `unknown event "x"; expected one of …; did you mean …?`. */
const notOneOf = (path: ReadonlyArray<PropertyKey>, ast: SchemaAST.Union, input: unknown): string => {
  const values = literalsOf(ast)
  if (typeof input !== "string") {
    return `must be ${stringAnnotation(ast, "expected") ?? `one of ${values.join(", ")}`}, got ${show(input)}`
  }
  const noun = stringAnnotation(ast, "noun") ?? "value"
  return `unknown ${noun} ${JSON.stringify(input)}; expected one of ${values.join(", ")}${didYouMean(input, values)}`
}

/**
 * A key the object does not take. In a record (`env`), a key its key schema rejects is an unexpected key to
 * effect: the key schema's own message says why (`invalid variable name "A=B"; …`).
 */
const unknownKey = (path: ReadonlyArray<PropertyKey>, ast: SchemaAST.AST): string => {
  const known = SchemaAST.isObjects(ast) ? ast.propertySignatures.map((p) => String(p.name)) : []
  const key = path[path.length - 1]
  const [record] = SchemaAST.isObjects(ast) ? ast.indexSignatures : []
  if (record !== undefined && typeof key === "string") {
    const checked = Schema.decodeUnknownResult(Schema.make<Schema.Codec<unknown>>(record.parameter))(key, {
      errors: "all"
    })
    const [why] = Result.isFailure(checked) ? schemaProblems(checked.failure.issue) : []
    if (why !== undefined) return why.message
  }
  const hint = key === undefined ? undefined : closestName(String(key), known)
  return hint === undefined
    ? `unknown key; expected one of ${known.join(", ")}`
    : `unknown key; did you mean "${hint}"?`
}

/** A filter's own message; with `duplicateOf`, the first occurrence's path (relative to the filtered value). */
const filterMessage = (
  annotations: SchemaIssue.InvalidValue["annotations"],
  filteredAt: ReadonlyArray<PropertyKey> | undefined
): string | undefined => {
  const message = annotations?.message
  if (message === undefined) return undefined
  const duplicateOf = annotations?.["duplicateOf"]
  const fix = annotations?.["fix"]
  const also =
    Array.isArray(duplicateOf) && filteredAt !== undefined
      ? ` (also ${renderPath([...filteredAt, ...duplicateOf.filter((k) => typeof k === "number" || typeof k === "string")])})`
      : ""
  return `${message}${also}${typeof fix === "string" ? `; ${fix}` : ""}`
}

/**
 * Every problem in a Schema issue (decoded with `errors: "all"` and `reportInput: true`), in the order the Schema
 * reports them. `ast` is the schema node being walked (from the nearest Composite); `filteredAt` the path of the
 * value the nearest filter looked at.
 */
export const schemaProblems = (issue: SchemaIssue.Issue): ReadonlyArray<SchemaProblem> => {
  const out: Array<SchemaProblem> = []
  const add = (path: ReadonlyArray<PropertyKey>, message: string, missingKey = false) => {
    const last = out[out.length - 1]
    // A value failing two checks of one field (-1.5: not an integer, not positive) is one problem.
    if (last !== undefined && last.message === message && renderPath(last.path) === renderPath(path)) return
    out.push({ path, message, missingKey })
  }
  const walk = (
    i: SchemaIssue.Issue,
    path: ReadonlyArray<PropertyKey>,
    ast: SchemaAST.AST | undefined,
    filteredAt: ReadonlyArray<PropertyKey> | undefined
  ): void => {
    switch (i._tag) {
      case "Pointer":
        return walk(i.issue, [...path, ...i.path], undefined, filteredAt)
      case "Composite":
        return i.issues.forEach((child) => walk(child, path, i.ast, filteredAt))
      case "Encoding":
        return walk(i.issue, path, ast, filteredAt)
      case "Filter":
        return walk(i.issue, path, ast, path)
      case "AnyOf":
        if (i.issues.length > 0) return i.issues.forEach((child) => walk(child, path, i.ast, filteredAt))
        return add(path, notOneOf(path, i.ast, i.input))
      case "InvalidType":
        return add(path, mustBe(path, i.ast, i.input))
      case "InvalidValue":
        return add(path, filterMessage(i.annotations, filteredAt) ?? mustBe(path, ast, i.input))
      case "MissingKey":
        return add(path, i.annotations?.messageMissingKey ?? "missing", true)
      case "UnexpectedKey":
        return add(path, unknownKey(path, i.ast))
      case "Forbidden":
        return add(path, i.annotations?.message ?? "not allowed")
      case "OneOf":
        return add(path, `matches more than one of ${literalsOf(i.ast).join(", ")}`)
    }
  }
  walk(issue, [], undefined, undefined)
  return out
}
