import { MaxJsonDepth } from "@abhed/protocol"

/**
 * Args as the extensions read them. The host sends a call's args as JSON text, and what JSON writes is not always
 * the value it was given: `-0` is written `0`, a field holding `undefined` is left out (`null` in an array), a `Date`
 * or anything with `toJSON` is written as what that returns, a class instance or a `Map` as its own enumerable
 * fields. A handler handed the value itself would run on args no extension was shown (a guard judged `0`, the
 * handler got `-0`). So the guarded toolkit sends, and runs, the JSON form: the value read back from its JSON text.
 *
 * The walk costs far less than writing and reading back every call's args, and finds nothing in args decoded from
 * JSON (what a model sends, once its parameter Schema encoded them again): only args that differ are rewritten.
 * What JSON cannot carry at all (a BigInt, `Infinity`, nesting deeper than `MaxJsonDepth`) is left as it is: the
 * host refuses it, saying why.
 */

/** Whether `value` reads back from its JSON text as itself (the leaves the host refuses count as themselves). */
export const isJsonForm = (value: unknown): boolean => {
  if (Object.is(value, -0)) return false
  const values: Array<unknown> = [value]
  const depths: Array<number> = [0]
  while (values.length > 0) {
    const next = values.pop()
    const depth = (depths.pop() ?? 0) + 1
    if (typeof next !== "object" || next === null) continue
    // Deeper than the host sends (a cycle, say): the host refuses it, so nothing here is sent or run.
    if (depth > MaxJsonDepth) return true
    let children: ArrayLike<unknown>
    if (Array.isArray(next)) children = next
    else {
      const proto: unknown = Object.getPrototypeOf(next)
      if (proto !== Object.prototype && proto !== null) return false
      if (typeof (next as { readonly toJSON?: unknown }).toJSON === "function") return false
      children = Object.values(next)
    }
    for (let i = 0; i < children.length; i++) {
      const child = children[i]
      switch (typeof child) {
        case "object":
          if (child !== null) {
            values.push(child)
            depths.push(depth)
          }
          break
        case "number":
          if (Object.is(child, -0)) return false
          break
        case "undefined":
        case "function":
        case "symbol":
          // Left out of an object, `null` in an array (a hole in a sparse array reads as `undefined` too).
          return false
      }
    }
  }
  return true
}

export type JsonForm =
  | { readonly _tag: "same"; readonly value: unknown }
  | { readonly _tag: "changed"; readonly value: unknown }
  /** JSON.stringify threw (a `toJSON` or getter that throws): nothing the extensions could be shown. */
  | { readonly _tag: "unwritable"; readonly message: string }

/** `value`'s JSON form: `value` itself when it is one (`same`), else what its JSON text reads back as. */
export const jsonForm = (value: unknown): JsonForm => {
  if (value === undefined || isJsonForm(value)) return { _tag: "same", value }
  try {
    const text = JSON.stringify(value)
    return { _tag: "changed", value: text === undefined ? undefined : JSON.parse(text) }
  } catch (e) {
    return { _tag: "unwritable", message: e instanceof Error ? e.message : String(e) }
  }
}
