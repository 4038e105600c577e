import type { ExtensionHostShape, ToolCallOutcome } from "@abhed/host"
import { Effect, Exit, Schema } from "effect"
import { Tool } from "effect/ai"
import { fromContent, toContent } from "./ToolArgs.ts"

/**
 * A guarded tool's results (docs/embedding.md): the refusals it gives instead of running a call, and the final
 * result of a call that ran, judged by `tool_result` and read back (step 4 of GuardedToolkit.ts).
 */

/** Denied and failed calls, as effect/ai's own denial: valid for every tool, in both failure modes. */
export const executionDenied = (reason: string): typeof Tool.ExecutionFailure.Type => ({
  type: "execution-denied",
  reason
})

/** A refusal as a handler's result. */
export const denied = (reason: string, origin: Tool.FailureOrigin): Tool.HandlerResult<Tool.Any> => {
  const result = executionDenied(reason)
  return { result, encodedResult: result, isFailure: true, failureOrigin: origin, preliminary: false }
}

// Tool schemas are expected to need no services (effect/ai's own tools never do); one that does dies at run time.
export const serviceFree = (schema: Schema.Top): Schema.Codec<unknown, unknown> =>
  schema as Schema.Codec<unknown, unknown>

/** The results this module builds are valid for every tool (`execution-denied`, or what the tool's schemas decoded). */
export const narrow = <T extends Tool.Any>(result: Tool.HandlerResult<Tool.Any>): Tool.HandlerResult<T> =>
  result as Tool.HandlerResult<T>

/**
 * An unchanged result as the filters judged it. effect/ai computes `modelOutput` from the handler's own value, which
 * may hold more than the success Schema encodes (an extra field TypeScript let through); `tool_result` judged the
 * encoded result, so that is what the model's output is made from.
 */
const judged = (tool: Tool.Any, result: Tool.HandlerResult<Tool.Any>): Tool.HandlerResult<Tool.Any> => {
  if (result.isFailure || tool.toModelOutput === undefined) return result
  const decoded = Schema.decodeUnknownExit(serviceFree(tool.successSchema))(result.encodedResult)
  if (Exit.isFailure(decoded))
    return denied(`${tool.name}'s result does not decode through its own result schema`, "result")
  return { ...result, result: decoded.value, modelOutput: tool.toModelOutput(decoded.value) }
}

/**
 * A final result through `tool_result` as text (ToolArgs.toContent), read back: unchanged, the typed result stands;
 * rewritten, it is decoded again through the tool's success (or failure) Schema; a rewrite that does not decode,
 * and an `is_error` an extension raised, become a failure result whose reason is the text the extensions settled on.
 */
export const afterResult = (
  host: ExtensionHostShape,
  tool: Tool.Any,
  outcome: ToolCallOutcome,
  callId: string | undefined,
  result: Tool.HandlerResult<Tool.Any>
) =>
  Effect.gen(function* () {
    const content = toContent(result.encodedResult)
    const out = yield* host.toolResult({
      tool: tool.name,
      args: outcome.args,
      content,
      is_error: result.isFailure,
      call_id: callId
    })
    if (out.content === content && out.is_error === result.isFailure) return judged(tool, result)
    if (out.is_error && !result.isFailure) return denied(out.content, "result")
    const parsed = fromContent(out.content, typeof result.encodedResult === "string")
    const schema = result.isFailure ? Tool.failureResultSchema(tool) : tool.successSchema
    const decoded = parsed._tag === "ok" ? Schema.decodeUnknownExit(serviceFree(schema))(parsed.value) : undefined
    if (parsed._tag === "invalid" || decoded === undefined || Exit.isFailure(decoded)) {
      return denied(
        `result rewritten by extensions no longer fits ${tool.name}'s result schema: ${out.content}`,
        "result"
      )
    }
    const rewritten: Tool.HandlerResult<Tool.Any> = {
      result: decoded.value,
      encodedResult: parsed.value,
      isFailure: result.isFailure,
      preliminary: false,
      ...(result.failureOrigin !== undefined ? { failureOrigin: result.failureOrigin } : {}),
      // What the model reads is recomputed from the rewritten result: the original must not leak through it.
      ...(!result.isFailure && tool.toModelOutput !== undefined
        ? { modelOutput: tool.toModelOutput(decoded.value) }
        : {})
    }
    return rewritten
  })
