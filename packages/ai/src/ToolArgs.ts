import { isJsonObject, type JsonObject } from "@abhed/protocol"

/**
 * The host speaks JSON objects (`tool_call.args`), a tool's encoded parameters may be anything JSON. Boxing is
 * reversible because the caller remembers whether it boxed:
 *
 * - a JSON object goes as it is;
 * - anything else (a string, a number, an array, null) goes as `{ "value": params }`, and the settled args are
 *   unboxed by taking their `value` again (an extension that removed it leaves nothing that decodes: the call is
 *   refused, naming it).
 */
export interface Boxed {
  readonly args: JsonObject
  readonly boxed: boolean
}

export const BoxKey = "value"

export const box = (params: unknown): Boxed =>
  isJsonObject(params) ? { args: params, boxed: false } : { args: { [BoxKey]: params }, boxed: true }

export const unbox = (args: JsonObject, boxed: boolean): unknown => (boxed ? args[BoxKey] : args)

/**
 * `tool_result.content` is a string. A tool's encoded result goes as it is when it is a string, and as JSON text
 * otherwise; a rewritten content is read back the same way (a string stays a string, anything else is parsed).
 */
export const toContent = (encoded: unknown): string =>
  typeof encoded === "string" ? encoded : (JSON.stringify(encoded) ?? "null")

export type FromContent =
  | { readonly _tag: "ok"; readonly value: unknown }
  | { readonly _tag: "invalid"; readonly message: string }

export const fromContent = (content: string, wasString: boolean): FromContent => {
  if (wasString) return { _tag: "ok", value: content }
  try {
    return { _tag: "ok", value: JSON.parse(content) }
  } catch (e) {
    return { _tag: "invalid", message: e instanceof Error ? e.message : String(e) }
  }
}
