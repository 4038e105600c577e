import { formatReasons } from "@abhed/core"
import { Approval } from "@abhed/host"
import { Effect, Exit, Schema, Stream } from "effect"
import { Prompt, Response, type Tool, type AiError, type Toolkit } from "effect/ai"
import { denied, serviceFree } from "./GuardedResult.ts"

/**
 * The approval flow of a guarded toolkit (step 2 of GuardedToolkit.ts): an ask ends the model's turn with a
 * `tool-approval-request`; `resolveApprovals` asks the host's Approver about the settled args and runs the approved
 * calls here. Only the Approver's yes lets a requested approval run a call.
 */

/** A guarded toolkit: pass it as `toolkit` to `generateText`/`streamText`, like any handled toolkit. */
export interface Guarded<Tools extends Record<string, Tool.Any>> extends Toolkit.WithHandler<Tools> {
  /**
   * What a `tool-approval-request` is about: the tool, the SETTLED args that will run if approved, and the
   * extensions' reasons (none when only the tool's own `needsApproval` asked). Undefined for a call no approval was
   * requested for here.
   */
  readonly awaiting: (toolCallId: string) => Approval.ApprovalRequest | undefined
}

/**
 * How `resolveApprovals` records the Approver's yes in the toolkit that requested the approval. Kept here, not on
 * the toolkit: nothing else may approve a call.
 */
const approvers = new WeakMap<object, Approve>()

/**
 * Records the Approver's yes; returns the request to ask again when the set in force (a reload since the call was
 * judged) asks anew (PendingCall.ts), else undefined: the call runs as that set decides.
 */
type Approve = (toolCallId: string) => Effect.Effect<Approval.ApprovalRequest | undefined>

/** The toolkit's own record of the Approver's yes, set once, when it is made. */
export const registerApprover = (toolkit: object, approve: Approve): void => {
  if (!approvers.has(toolkit)) approvers.set(toolkit, approve)
}

/**
 * Answers the `tool-approval-request`s of a response through the host's `Approver` (a prompt, or
 * `Approver.layerDeny` unattended), showing it the settled args and the reasons, and **runs the approved calls
 * here**, with exactly the args that were approved. Returns the tool messages to append to the history before the
 * next model call (empty when nothing was asked): the approval answers and the approved calls' results (through
 * `tool_result`, like every result); refused ones reach the model as `execution-denied` with the reasons.
 *
 * Why here and not in the next `generateText`, which would run them too: effect/ai appends what it runs to the
 * prompt it was given, after `PromptHooks.applyContext` filtered that prompt, so those results would reach the
 * model without the `context` event. Appended to the history here, they are filtered like every other message; the
 * next `generateText` sees the calls answered and runs nothing again.
 */
export const resolveApprovals = <Tools extends Record<string, Tool.Any>>(
  toolkit: Guarded<Tools>,
  content: ReadonlyArray<Response.AnyPart>
): Effect.Effect<
  Prompt.Prompt,
  Tool.HandlerError<Tools[keyof Tools]> | AiError.AiError,
  Approval.Approver | Tool.HandlerServices<Tools[keyof Tools]>
> =>
  Effect.gen(function* () {
    const answers: Array<{ readonly answer: Prompt.ToolApprovalResponsePart; readonly callId: string }> = []
    const results: Array<Response.ToolResultPart<string, unknown, unknown>> = []
    for (const part of content) {
      if (part.type !== "tool-approval-request") continue
      const call = content.find(
        (p): p is Response.ToolCallPart<string, unknown> => p.type === "tool-call" && p.id === part.toolCallId
      )
      let request = toolkit.awaiting(part.toolCallId)
      // Not requested here (another toolkit's response, or an outcome no longer kept): there are no settled args
      // to show, so nobody is asked about the model's, and the call is refused.
      let approved = false
      let asking = request
      while (asking !== undefined) {
        const shown = asking
        request = shown
        approved = yield* Approval.Approver.use((a) => a.approve(shown))
        // A yes is for the set in force: a reload since may ask anew (asked again here) or deny.
        asking = approved ? yield* approvers.get(toolkit)?.(part.toolCallId) ?? Effect.undefined : undefined
      }
      const why =
        request === undefined
          ? "not approved: no approval was requested for this call by this toolkit"
          : `not approved${request.reasons.length > 0 ? `: ${formatReasons(request.reasons)}` : ""}`
      answers.push({
        callId: part.toolCallId,
        answer: Prompt.toolApprovalResponsePart({
          approvalId: part.approvalId,
          approved,
          ...(approved ? {} : { reason: why })
        })
      })
      if (approved && call !== undefined) results.push(yield* runApproved(toolkit, call))
    }
    if (answers.length === 0) return Prompt.empty
    // Each answer in one message with its call's result: a context filter keeps or drops them together. Kept
    // apart, a filter that dropped the result alone left the approval pending for effect/ai, which ran it again.
    const resultParts = new Map<string, Array<Prompt.ToolMessagePart>>()
    for (const message of Prompt.fromResponseParts(results).content) {
      if (message.role !== "tool") continue
      for (const part of message.content) {
        if (part.type === "tool-result") resultParts.set(part.id, [...(resultParts.get(part.id) ?? []), part])
      }
    }
    return Prompt.fromMessages(
      answers.map(({ answer, callId }) =>
        Prompt.makeMessage("tool", { content: [answer, ...(resultParts.get(callId) ?? [])] })
      )
    )
  })

/**
 * One approved call, run as effect/ai runs it (the guarded handler, which takes the outcome kept for this call id
 * and sends `tool_result`), as the tool-result part effect/ai would have made. The response's params are decoded:
 * encoded again for the handler, which takes them as the model sent them.
 */
const runApproved = <Tools extends Record<string, Tool.Any>>(
  toolkit: Guarded<Tools>,
  call: Response.ToolCallPart<string, unknown>
) =>
  Effect.gen(function* () {
    const tool: Tool.Any | undefined = Object.hasOwn(toolkit.tools, call.name) ? toolkit.tools[call.name] : undefined
    const encoded =
      tool === undefined ? undefined : Schema.encodeUnknownExit(serviceFree(tool.parametersSchema))(call.params)
    const final =
      encoded === undefined || Exit.isFailure(encoded)
        ? undefined
        : yield* toolkit
            .handle(call.name, encoded.value as Tool.ParametersEncoded<Tools[keyof Tools]>, call.id)
            .pipe(Effect.flatMap((stream) => Stream.runLast(Stream.filter(stream, (r) => !r.preliminary))))
    const result: Tool.HandlerResult<Tool.Any> =
      final === undefined || final._tag === "None"
        ? denied(`${call.name}: approved, but there was nothing to run`, "handler")
        : final.value
    return Response.makePart("tool-result", {
      id: call.id,
      name: call.name,
      result: result.result,
      encodedResult: result.encodedResult,
      ...(result.modelOutput !== undefined ? { modelOutput: result.modelOutput } : {}),
      isFailure: result.isFailure,
      preliminary: false,
      providerExecuted: false
    })
  })
