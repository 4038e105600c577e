/** A JSON object as the model or the agent wrote it. Decoded shallowly: payloads can be megabytes. */
export type JsonObject = { readonly [key: string]: unknown }

export const isJsonObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The deepest nesting of arrays and objects a reply may carry. `JSON.parse` accepts any depth, but
 * `JSON.stringify` and every recursive walk (settling comparisons, the audit log, the next round's request)
 * overflow the stack a few thousand levels down: a reply deeper than this is malformed.
 */
export const MaxJsonDepth = 256

/** What keeps a value from being JSON the host can pass on unchanged. */
export type JsonProblem = "deep" | "bigint" | "nonfinite"

/** Which leaves a walk checks besides the nesting. */
interface Leaves {
  readonly bigint: boolean
  readonly nonfinite: boolean
}
const AllLeaves: Leaves = { bigint: true, nonfinite: true }
const NoLeaves: Leaves = { bigint: false, nonfinite: false }
const BigIntsOnly: Leaves = { bigint: true, nonfinite: false }

const leafProblem = (u: unknown, leaves: Leaves): JsonProblem | undefined =>
  leaves.bigint && typeof u === "bigint"
    ? "bigint"
    : leaves.nonfinite && typeof u === "number" && !Number.isFinite(u)
      ? "nonfinite"
      : undefined

/**
 * One iterative walk for the checks below: the first problem found, if any. Two parallel stacks (values and
 * depths) rather than an object per node: it runs on every reply and on every request field the agent passes.
 * Leaves are checked where they are met, never pushed: a BigInt, and a number JSON has no text for (`Infinity`,
 * `NaN`: what `JSON.parse` makes of `1e999`). `JSON.stringify` writes those as `null`, so an extension would judge
 * `null` while the tool ran with `Infinity`.
 */
const findProblem = (value: unknown, limit: number, leaves: Leaves): JsonProblem | undefined => {
  const top = leafProblem(value, leaves)
  if (top !== undefined) return top
  const values: Array<unknown> = [value]
  const depths: Array<number> = [0]
  while (values.length > 0) {
    const next = values.pop()
    const depth = (depths.pop() ?? 0) + 1
    if (typeof next !== "object" || next === null) continue
    if (depth > limit) return "deep"
    for (const child of Array.isArray(next) ? next : Object.values(next)) {
      if (typeof child === "object" && child !== null) {
        values.push(child)
        depths.push(depth)
      } else if (leaves !== NoLeaves) {
        const problem = leafProblem(child, leaves)
        if (problem !== undefined) return problem
      }
    }
  }
  return undefined
}

/**
 * What keeps `value` from being JSON the host can handle, if anything: nesting deeper than `limit` levels (a cycle
 * is infinitely deep), a BigInt (only an in-process extension can hand one over), or a number JSON has no text for
 * (`1e999` parses as `Infinity`). Iterative.
 */
export const jsonProblem = (value: unknown, limit: number): JsonProblem | undefined =>
  findProblem(value, limit, AllLeaves)

/**
 * `jsonProblem` for a value whose non-finite numbers are harmless (a context filter's `keep`: such an index is
 * ignored, like `2.5`): nesting and BigInts only. Not the first problem of a full walk: a `1e999` met first must not
 * hide a value nested too deep behind it.
 */
export const jsonProblemButNumbers = (value: unknown, limit: number): JsonProblem | undefined =>
  findProblem(value, limit, BigIntsOnly)

/** Whether `value` nests arrays and objects more than `limit` levels deep (a scalar is 0, `[]` is 1). Iterative. */
export const nestedDeeperThan = (value: unknown, limit: number): boolean =>
  findProblem(value, limit, NoLeaves) === "deep"

/**
 * Why the host cannot send a request field to an extension (docs/design.md#input-from-the-agent, input from the agent),
 * or undefined when it can. The whole request may nest at most `MaxJsonDepth` levels, like a reply, so a field that
 * sits one level down (`args`, `messages`) may nest `MaxJsonDepth - 1`: then an extension that echoes `args` back in
 * its reply stays within the reply limit. A cycle is infinitely deep. A BigInt is not JSON. Iterative: it never
 * overflows the stack on the input it is there to catch.
 */
export const unsendableField = (field: string, value: unknown): string | undefined => {
  const problem = findProblem(value, MaxJsonDepth - 1, AllLeaves)
  return problem === "bigint"
    ? `${field} holds a BigInt, which JSON cannot carry`
    : problem === "nonfinite"
      ? `${field} holds a number JSON cannot carry (Infinity or NaN, which an extension would read as null)`
      : problem === "deep"
        ? `${field} nested too deep (a request may nest at most ${MaxJsonDepth} levels)`
        : undefined
}

/**
 * A short text of any value, for errors, notes and audit lines: its JSON, cut to `max` characters. It never throws
 * and never overflows the stack, whatever an extension (or an in-process one) handed over: a value nested more than
 * `MaxJsonDepth` levels, or a cycle, is described instead; a BigInt shows as `7n` (nested ones as the string
 * `"7n"`); a value JSON has no text for (`undefined`, a function) shows as `String` would.
 */
export const previewJson = (
  value: unknown,
  max: number,
  mapValue: (key: string, v: unknown, holder: unknown) => unknown = (_key, v) => v
): string => {
  let text: string
  try {
    text = nestedDeeperThan(value, MaxJsonDepth)
      ? `(JSON nested more than ${MaxJsonDepth} levels deep)`
      : typeof value === "bigint"
        ? `${value}n`
        : (JSON.stringify(value, function (this: unknown, key, v: unknown) {
            return typeof v === "bigint" ? `${v}n` : mapValue(key, v, this)
          }) ?? String(value))
  } catch {
    text = "(a value JSON cannot show)" // a getter or toJSON that throws
  }
  return text.length > max ? `${text.slice(0, Math.max(0, max - 3))}...` : text
}

/**
 * Keys a shape shows as they are: the protocol's own words (request and reply fields, a tool's), which carry no
 * content. Any other key may: a redactor's map from the secrets it found to their replacements has them as keys.
 */
const ProtocolKeys: ReadonlySet<string> = new Set([
  "event",
  "session_id",
  "id",
  "call_id",
  "round",
  "tool",
  "args",
  "content",
  "is_error",
  "messages",
  "system",
  "block",
  "ask",
  "reason",
  "keep",
  "cancel",
  "summary",
  "tools",
  "name",
  "description",
  "input_schema",
  "result"
])

/**
 * An object's keys as shown: the protocol's own as they are, any other by its length, numbered where two read alike.
 */
const hideKeys = (o: { readonly [key: string]: unknown }): Record<string, unknown> => {
  const out: Record<string, unknown> = Object.create(null)
  for (const [key, v] of Object.entries(o)) {
    const base = ProtocolKeys.has(key) ? key : `<${key.length} chars>`
    let shown = base
    for (let n = 2; Object.hasOwn(out, shown); n++) shown = `${base}#${n}`
    out[shown] = v
  }
  return out
}

/**
 * The shape of a value an extension wrote (a stray line, a reply field of the wrong type), for death causes, notes
 * and audit lines: its JSON with every string shown by its length and every number as `<number>`, keys by their
 * length unless they are the protocol's own, booleans and null as they are (`{"debug":"<57 chars>","<6 chars>":
 * "<number>"}`), cut to `max` characters. Such a value can hold anything the extension saw (a debug print of a
 * `tool_result`, a secret a redactor removed: as a string, a number or a key), and a death cause goes to the audit,
 * the log and the model's notes, where content is never kept verbatim (docs/design.md#failures). The shape is what
 * an author needs to find the stray print. `showTop` keeps the strings of the value's own keys a caller knows to be
 * harmless (the host's own request ids) as they are.
 */
export const shapeJson = (
  value: unknown,
  max: number,
  showTop: (key: string, s: string) => boolean = () => false
): string => {
  // The replacer sees the value itself too (key ""), so a lone string is hidden like any other. `showTop` is asked
  // about the value's own keys only (their holder is the value, as shown): an `id` nested in a payload is content.
  let top: unknown = value
  return previewJson(value, max, (key, v, holder) => {
    if (typeof v === "string") return holder === top && showTop(key, v) ? v : hiddenString(v)
    if (typeof v === "number" || typeof v === "bigint") return "<number>"
    if (isJsonObject(v)) {
      const shown = hideKeys(v)
      if (v === value) top = shown
      return shown
    }
    return v
  })
}

const hiddenString = (s: string): string => `<${s.length} chars>`

/** Canonical JSON text: object keys sorted, so two values compare equal regardless of key order. */
export const canonicalJson = (value: unknown): string => JSON.stringify(sortKeys(value))

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (isJsonObject(value)) {
    // No prototype: on a plain object, assigning the key "__proto__" would set the prototype and drop the key.
    const out: Record<string, unknown> = Object.create(null)
    for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key])
    return out
  }
  return value
}

/** JSON value equality where object key order does not matter (docs/design.md#combination, settling). */
export const jsonEquals = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEquals(a[i], b[i])) return false
    return true
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    for (const k of ka) if (!Object.hasOwn(b, k) || !jsonEquals(a[k], b[k])) return false
    return true
  }
  return false
}
