import { Context, Result, Schema } from "effect"
import type * as SchemaAST from "effect/SchemaAST"
import type { Tool } from "effect/ai"
import { ArgsSchema } from "./ArgsSchema.ts"
import { serviceFree } from "./GuardedResult.ts"
import { jsonForm } from "./JsonForm.ts"

/**
 * A call's args as the guarded toolkit sends them to the extensions and, once settled, runs them (step 0 and 2 of
 * GuardedToolkit.ts): checked against what the tool takes, encoded through its parameter Schema, in their JSON form
 * (JsonForm.ts: what the extensions read is what runs).
 */

const argsSchemaOf = (tool: Tool.Any): Schema.Top =>
  Context.getOrUndefined(tool.annotations, ArgsSchema) ?? tool.parametersSchema

export const validateArgs = (tool: Tool.Any, params: unknown) =>
  Schema.decodeUnknownResult(serviceFree(argsSchemaOf(tool)))(params)

export type Normalized =
  | { readonly _tag: "args"; readonly args: unknown }
  /** The model's mistake: not what the tool takes. */
  | { readonly _tag: "invalid"; readonly message: string }
  /**
   * Decoded, but the Schema cannot encode it back (a decode-only transformation), or its JSON form is not what the
   * tool takes: nothing to show the extensions.
   */
  | { readonly _tag: "unencodable"; readonly message: string }

/**
 * Encoded args in the form the extensions read (JsonForm.ts). Args whose JSON form differs are checked again:
 * the tool must take what the extensions were shown, as it takes the model's.
 */
export const judgeable = (tool: Tool.Any, encoded: unknown): Normalized => {
  const form = jsonForm(encoded)
  if (form._tag === "same") return { _tag: "args", args: form.value }
  if (form._tag === "unwritable") return { _tag: "unencodable", message: `as JSON: ${form.message}` }
  const checked = validateArgs(tool, form.value)
  return Result.isFailure(checked)
    ? {
        _tag: "unencodable",
        message: `as JSON, what the extensions read, they no longer fit: ${checked.failure.message}`
      }
    : { _tag: "args", args: form.value }
}

/**
 * The model's params as the extensions see them: decoded through the tool's parameter Schema (with the caller's
 * parse options, as the handler will be) and encoded again, so `needsApproval` (which effect/ai hands decoded
 * params) and `handle` (encoded ones) send, and match, the same args (a Struct drops keys it does not know, for one).
 */
export const normalize = (tool: Tool.Any, params: unknown, options?: SchemaAST.ParseOptions): Normalized => {
  const codec = serviceFree(tool.parametersSchema)
  const decoded = Schema.decodeUnknownResult(codec)(params, options)
  if (Result.isFailure(decoded)) return { _tag: "invalid", message: decoded.failure.message }
  // The tool's own check, without the caller's options: options that loosen the decode (`disableChecks`) must not
  // let through what the tool rejects.
  const checked = validateArgs(tool, params)
  if (Result.isFailure(checked)) return { _tag: "invalid", message: checked.failure.message }
  const encoded = Schema.encodeUnknownResult(codec)(decoded.success, options)
  return Result.isFailure(encoded)
    ? { _tag: "unencodable", message: encoded.failure.message }
    : judgeable(tool, encoded.success)
}

/** Why a call whose args are not what the tool takes is refused (docs/embedding.md). */
export const invalidReason = (tool: string, message: string): string =>
  `args do not fit ${tool}'s parameters: ${message}`

/** Why a call whose args cannot be encoded is refused rather than run unjudged (docs/embedding.md). */
export const unencodableReason = (tool: string, message: string): string =>
  `${tool}'s parameter Schema cannot encode the args back, so no extension can judge the call: refused (${message})`
