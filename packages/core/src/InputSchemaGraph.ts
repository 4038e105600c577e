import { isJsonObject } from "@abhed/protocol"
import { JsonPointer } from "effect"

/**
 * A declared `input_schema` as a graph: each subschema is a node, each `$ref` an edge to the node it points at, so
 * two dangers `$ref` brings can be found before any args are checked (InputSchema.ts):
 *
 * - a cycle that never descends into the value (`a` is `{"$ref": "#/$defs/a"}`, or reaches itself through `anyOf`):
 *   checking any value against it recurses until the stack overflows. `sameValueCycle` finds one at compile time.
 * - sharing: references let a small schema describe exponentially many ways to check one value (`d_i` is "`d_{i+1}`,
 *   or an array of `d_{i+1}`"). `checkingCost` counts the checking work for given args, up to a budget.
 */

/** Which part of the value a subschema applies to. */
type Part =
  /** `allOf`, `anyOf`, `oneOf`, `not`, `if`, `then`, `else`, `dependentSchemas`, `$ref`. */
  | { readonly _tag: "Value" }
  /** `propertyNames`: each key of an object. */
  | { readonly _tag: "Keys" }
  /** `properties.<name>`. */
  | { readonly _tag: "Property"; readonly name: string }
  /**
   * `patternProperties` (patterns are not run, so any key may match), `additionalProperties`, `unevaluatedProperties`.
   */
  | { readonly _tag: "AnyProperty" }
  /** `prefixItems[i]`, and `items[i]` of older drafts. */
  | { readonly _tag: "Element"; readonly index: number }
  /** `items`, `additionalItems`, `contains`, `unevaluatedItems`. */
  | { readonly _tag: "AnyElement" }

interface Edge {
  readonly part: Part
  readonly to: Node
  /** The `$ref` this edge follows, if it is one. */
  readonly ref: string | undefined
}

interface Node {
  readonly edges: Array<Edge>
}

export interface SchemaGraph {
  readonly root: Node
  /** Every node reachable from the root. */
  readonly nodes: ReadonlyArray<Node>
}

const Value: Part = { _tag: "Value" }
const Keys: Part = { _tag: "Keys" }
const AnyProperty: Part = { _tag: "AnyProperty" }
const AnyElement: Part = { _tag: "AnyElement" }

/**
 * The subschemas of one schema object (its `$ref` aside): each with where it applies and the keyword path to it
 * (`.properties.name`, `.anyOf[0]`). The one walk of JSON Schema's subschema keywords: the graph below is built on
 * it, and so is the check of every `type` (InputSchema.ts).
 */
export const subschemas = (schema: { readonly [key: string]: unknown }): Array<readonly [unknown, Part, string]> => {
  const out: Array<readonly [unknown, Part, string]> = []
  const each = (key: string, part: (i: number) => Part) => {
    const list = schema[key]
    if (Array.isArray(list)) list.forEach((child, i) => out.push([child, part(i), `.${key}[${i}]`]))
  }
  const values = (key: string, part: (name: string) => Part) => {
    const group = schema[key]
    if (isJsonObject(group))
      for (const [name, child] of Object.entries(group)) out.push([child, part(name), `.${key}.${name}`])
  }
  const one = (key: string, part: Part) => {
    if (key in schema) out.push([schema[key], part, `.${key}`])
  }
  for (const key of ["allOf", "anyOf", "oneOf"]) each(key, () => Value)
  for (const key of ["not", "if", "then", "else"]) one(key, Value)
  values("dependentSchemas", () => Value)
  one("propertyNames", Keys)
  values("properties", (name) => ({ _tag: "Property", name }))
  values("patternProperties", () => AnyProperty)
  for (const key of ["additionalProperties", "unevaluatedProperties"]) one(key, AnyProperty)
  each("prefixItems", (index) => ({ _tag: "Element", index }))
  if (Array.isArray(schema["items"])) each("items", (index) => ({ _tag: "Element", index }))
  else if (schema["items"] !== undefined) one("items", AnyElement)
  for (const key of ["additionalItems", "contains", "unevaluatedItems"]) one(key, AnyElement)
  return out
}

/**
 * What a `$ref` points at: only `#/$defs/…` pointers resolve (what the importer supports, from the document's root);
 * for anything else, undefined: the importer rejects those references itself.
 */
const resolve = (root: unknown, ref: string): unknown => {
  const tokens = ref.startsWith("#") ? JsonPointer.parseUriFragment(ref) : undefined
  if (tokens === undefined || tokens.length < 2 || tokens[0] !== "$defs") return undefined
  let node: unknown = root
  for (const token of tokens) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, token)) return undefined
    node = (node as { readonly [key: string]: unknown })[token]
  }
  return node
}

/**
 * The graph of the subschemas reachable from `root`, built without recursion (a long `$ref` chain must not overflow
 * the stack here either). Each schema object is one node however often it is reached; `true`, `false` and anything
 * else that is not an object are leaves (constant work to check).
 */
export const schemaGraph = (root: { readonly [key: string]: unknown }): SchemaGraph => {
  const byObject = new Map<object, Node>()
  const nodes: Array<Node> = []
  const pending: Array<readonly [{ readonly [key: string]: unknown }, Node]> = []
  const nodeOf = (schema: unknown): Node => {
    if (!isJsonObject(schema)) return { edges: [] }
    const known = byObject.get(schema)
    if (known !== undefined) return known
    const node: Node = { edges: [] }
    byObject.set(schema, node)
    nodes.push(node)
    pending.push([schema, node])
    return node
  }
  const rootNode = nodeOf(root)
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [schema, node] = next
    const ref = schema["$ref"]
    if (typeof ref === "string") {
      const target = resolve(root, ref)
      if (target !== undefined) node.edges.push({ part: Value, to: nodeOf(target), ref })
    }
    for (const [child, part] of subschemas(schema)) node.edges.push({ part, to: nodeOf(child), ref: undefined })
  }
  return { root: rootNode, nodes }
}

/**
 * Whether checking a value against `to` may go on without looking at a smaller part of the value. `propertyNames`
 * counts as not descending: a key is not a part of the value, and a cycle through it is refused rather than
 * trusted to end.
 */
const staysOnValue = (edge: Edge): boolean => edge.part._tag === "Value" || edge.part._tag === "Keys"

/**
 * A cycle of subschemas that applies to the same value all the way round (it must pass a `$ref`: JSON has no other
 * way back), as the references on it, in order; undefined if there is none. Depth-first, with an explicit stack.
 */
export const sameValueCycle = (graph: SchemaGraph): ReadonlyArray<string> | undefined => {
  const state = new Map<Node, "open" | "done">()
  for (const start of graph.nodes) {
    if (state.has(start)) continue
    const stack: Array<{ readonly node: Node; next: number; readonly via: Edge | undefined }> = [
      { node: start, next: 0, via: undefined }
    ]
    state.set(start, "open")
    while (stack.length > 0) {
      const top = stack[stack.length - 1]
      if (top === undefined) break
      const edge = top.node.edges[top.next++]
      if (edge === undefined) {
        state.set(top.node, "done")
        stack.pop()
        continue
      }
      if (!staysOnValue(edge)) continue
      const seen = state.get(edge.to)
      if (seen === "open") {
        const from = stack.findIndex((frame) => frame.node === edge.to)
        const refs = [...stack.slice(from + 1).map((frame) => frame.via?.ref), edge.ref]
        return refs.filter((ref) => ref !== undefined)
      }
      if (seen === undefined) {
        state.set(edge.to, "open")
        stack.push({ node: edge.to, next: 0, via: edge })
      }
    }
  }
  return undefined
}

/**
 * How much work checking `args` against the schema may take, or why it is refused: "too costly" past `maxSteps`,
 * "too deep" when subschemas nest more than `maxDepth` applications deep (the Effect Schema that checks args
 * recurses once per application, and overflows the stack near a few thousand).
 *
 * The count over-approximates what the compiled Effect Schema does, so that the budget bounds the real work: every
 * subschema is applied to every part of the value it may apply to, as if every `anyOf`/`oneOf` alternative were
 * tried, every pattern matched every key and no type check failed early; a step is one application, plus one for
 * each subschema of the schema applied (a schema with many keywords costs more to apply). Counting stops at the
 * budget, so this takes at most about `maxSteps` steps itself, whatever the schema and the args.
 */
export const checkingCost = (
  graph: SchemaGraph,
  args: unknown,
  limits: { readonly maxSteps: number; readonly maxDepth: number }
): number | "too costly" | "too deep" => {
  let steps = 0
  const pending: Array<readonly [Node, unknown, number]> = [[graph.root, args, 0]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, value, depth] = next
    steps += 1 + node.edges.length
    if (steps > limits.maxSteps) return "too costly"
    if (depth > limits.maxDepth) return "too deep"
    for (const edge of node.edges) {
      for (const part of partsOf(edge.part, value)) {
        if (++steps > limits.maxSteps) return "too costly"
        pending.push([edge.to, part, depth + 1])
      }
    }
  }
  return steps
}

/** The parts of `value` a subschema at `part` applies to (none when the value has no such part). */
const partsOf = (part: Part, value: unknown): ReadonlyArray<unknown> => {
  switch (part._tag) {
    case "Value":
      return [value]
    case "Keys":
      return isJsonObject(value) ? Object.keys(value) : []
    case "Property":
      return isJsonObject(value) && Object.hasOwn(value, part.name) ? [value[part.name]] : []
    case "AnyProperty":
      return isJsonObject(value) ? Object.values(value) : []
    case "Element":
      return Array.isArray(value) && part.index < value.length ? [value[part.index]] : []
    case "AnyElement":
      return Array.isArray(value) ? value : []
  }
}
