import { formatReasons } from "@abhed/core"
import { type Approval, ExtensionHost, type ExtensionHostShape, IdCounter } from "@abhed/host"
import { canonicalJson } from "@abhed/protocol"
import { Effect, Exit, Result, Schema, Stream } from "effect"
import type * as SchemaAST from "effect/SchemaAST"
import { AiError, type Tool, type Toolkit } from "effect/ai"
import * as ExtensionToolkit from "./ExtensionToolkit.ts"
import { type Guarded, registerApprover } from "./GuardedApproval.ts"
import { afterResult, denied, narrow, serviceFree } from "./GuardedResult.ts"
import { JudgedCall } from "./JudgedCall.ts"
import { inForce, judge, type Pending, requestOf } from "./PendingCall.ts"
import { invalidReason, judgeable, normalize, unencodableReason, validateArgs } from "./NormalArgs.ts"
import { ProviderExecutedTool, providerExecuted } from "./ProviderExecutedTool.ts"
import { box, unbox } from "./ToolArgs.ts"

export { type Guarded, resolveApprovals } from "./GuardedApproval.ts"
export { executionDenied } from "./GuardedResult.ts"
export { invalidReason, unencodableReason } from "./NormalArgs.ts"

/**
 * A Toolkit whose every call the extensions judge (docs/design.md#wire-protocol, #combination, docs/embedding.md).
 * The rule: a handler runs only with args that went through `tool_call` and settled. Args that fail any check are
 * refused (`execution-denied`, saying why) and audited; they are never passed on in the hope that the inner
 * toolkit's decode refuses them (it may be looser).
 *
 * 0. The model's args are checked first, against the tool's `ArgsSchema` (or its parameter Schema). Args that do not
 *    fit are refused and recorded as a `tool_call` the host sent to no extension.
 * 1. `tool_call` first. A deny, and an ask nobody approved, become an `execution-denied` result whose reason names
 *    the extensions and their reasons: the model reads why.
 * 2. An ask goes through effect/ai's own approval flow: the tool's `needsApproval` dispatches `tool_call` and says
 *    yes, so the model's turn ends with a `tool-approval-request`; the outcome (decision and settled args) is kept by
 *    tool call id, and the approved turn runs exactly those args without asking the extensions again, once the
 *    host's Approver said yes (`resolveApprovals`): an approval from anywhere else runs nothing. Unless a reload
 *    swapped the set meanwhile: then the set in force judges it again first (PendingCall.ts).
 * 3. The tool runs with the SETTLED args, decoded again through its parameter Schema. Args an extension rewrote
 *    into something the Schema rejects are refused (`execution-denied`, naming who rewrote them), never run.
 * 4. Its final result goes through `tool_result` as text (ToolArgs.toContent) and is read back: unchanged, the
 *    typed result stands; rewritten, it is decoded again through the tool's success (or failure) Schema; a rewrite
 *    that does not decode, and an `is_error` an extension raised, become a failure result whose reason is the text
 *    the extensions settled on. Preliminary results are dropped: they never went through `tool_result`.
 *
 * The approval flow is GuardedApproval.ts; the results (refusals, and step 4) GuardedResult.ts.
 */

export { formatReasons }

/** How many call outcomes a guarded toolkit keeps for the approved turn (one conversation's pending asks). */
export const MaxPending = 1024

/** The guard over one handled toolkit. */
const make = <Tools extends Record<string, Tool.Any>>(
  host: ExtensionHostShape,
  inner: Toolkit.WithHandler<Tools>
): Guarded<Tools> => {
  const pending = new Map<string, Pending>()

  const needsApproval =
    (tool: Tool.Any): Tool.NeedsApprovalFunction<Schema.Top> =>
    (params, context) =>
      Effect.gen(function* () {
        const encoded = Schema.encodeUnknownExit(serviceFree(tool.parametersSchema))(params)
        // Not encodable, or not what the tool takes: nothing is sent, nobody is asked; `handle` refuses it.
        if (Exit.isFailure(encoded) || Result.isFailure(validateArgs(tool, encoded.value))) return false
        // In the form the extensions read (JsonForm.ts): what they judge is what runs.
        const judged = judgeable(tool, encoded.value)
        if (judged._tag !== "args") return false
        const entry = yield* judge(host, tool, judged.args, params, context)
        pending.set(context.toolCallId, entry)
        // Calls whose approval was refused are never handled, so never taken: keep the newest MaxPending only.
        // An evicted call that is approved after all is refused (its ask was not requested here), never run unasked.
        for (const oldest of pending.keys()) {
          if (pending.size <= MaxPending) break
          pending.delete(oldest)
        }
        return entry.approvalRequested
      })

  const guarded: Record<string, Tool.Any> = {}
  for (const [name, tool] of Object.entries(inner.tools)) guarded[name] = tool.setNeedsApproval(needsApproval(tool))
  // The same tools, each with `needsApproval` set: the record keeps its keys and each tool its type.
  const tools = guarded as Tools

  // Made as the host makes its ids (IdCounter: not through V8's number-to-string cache).
  const nextLocalId = IdCounter.make("ai-")

  /** The ids of the calls handled (judged, and run or refused), newest MaxPending kept: see `handle`. */
  const ran = new Set<string>()
  const remember = (id: string) => {
    ran.add(id)
    for (const oldest of ran) {
      if (ran.size <= MaxPending) break
      ran.delete(oldest)
    }
  }

  /**
   * The outcome `needsApproval` recorded for this very call, if any (taken: a call id runs once). "other" when the
   * id's outcome is another call's: two calls of one response sharing an id (a provider that lets the model name its
   * calls), where the Approver saw one call's args and would have let the other run.
   */
  const take = (name: string, params: unknown, toolCallId: string | undefined): Pending | "other" | undefined => {
    if (toolCallId === undefined) return undefined
    const entry = pending.get(toolCallId)
    pending.delete(toolCallId)
    if (entry === undefined) return undefined
    return entry.tool === name && entry.params === canonicalJson(params) ? entry : "other"
  }

  const handle = <Name extends keyof Tools>(
    name: Name,
    params: Tool.ParametersEncoded<Tools[Name]>,
    toolCallId?: string,
    options?: SchemaAST.ParseOptions
  ) =>
    Effect.gen(function* () {
      const tool = Object.hasOwn(tools, name) ? tools[name] : undefined
      // An unknown tool is refused as effect/ai refuses one, without asking the inner toolkit (whose `handle` may
      // know names its `tools` do not offer).
      if (tool === undefined) {
        return yield* AiError.make({
          module: "Toolkit",
          method: `${String(name)}.handle`,
          reason: new AiError.ToolNotFoundError({ toolName: String(name), availableTools: Object.keys(tools) })
        })
      }
      const single = (result: Tool.HandlerResult<Tool.Any>) => Stream.succeed(narrow<Tools[Name]>(result))
      // The id that ties this call's tool_call to its tool_result in the audit and for extensions.
      const callId = toolCallId ?? nextLocalId()
      // Refused before any extension judged it: recorded by the host (the args as given, sent to no extension, so a
      // careless extension never sees a shape its tool does not take), and never passed on.
      const refuse = (reason: string, origin: Tool.FailureOrigin) =>
        Effect.as(
          host.toolCall({ tool: tool.name, args: box(params).args, call_id: callId, refused: reason }),
          single(denied(reason, origin))
        )
      const normal = normalize(tool, params, options)
      if (normal._tag === "invalid") return yield* refuse(invalidReason(tool.name, normal.message), "parameters")
      // Args that decode but cannot be shown to the extensions would run unjudged: refused, never run.
      if (normal._tag === "unencodable")
        return yield* refuse(unencodableReason(tool.name, normal.message), "parameters")
      // A call runs once: a second handle of the same id (effect/ai taking an approval for pending again, after a
      // context filter dropped the result `resolveApprovals` had run) would run it again, unasked. Claimed before
      // anything is awaited: calls handled at once (an embedder's own loop over a response) all ran, each judged.
      if (toolCallId !== undefined && ran.has(toolCallId)) {
        return yield* refuse(`${tool.name}: call ${toolCallId} was handled already; a call runs once`, "handler")
      }
      if (toolCallId !== undefined) remember(toolCallId)
      const taken = take(tool.name, normal.args, toolCallId)
      if (taken === "other")
        return yield* refuse(
          `${tool.name}: call ${toolCallId} was judged with other args; a call id names one call`,
          "handler"
        )
      // Judged again if the config was reloaded since (PendingCall.ts): it runs as the set in force decides.
      const entry = taken === undefined ? undefined : yield* inForce(host, taken)
      const { args, boxed } = box(normal.args)
      const outcome = entry?.outcome ?? (yield* host.toolCall({ tool: tool.name, args, call_id: callId }))
      if (outcome.decision === "deny") return single(denied(formatReasons(outcome.reasons), "handler"))
      const settled = unbox(outcome.args, boxed)
      const checked = validateArgs(tool, settled)
      if (Result.isFailure(checked)) {
        const by =
          (outcome.rewrittenBy ?? []).length > 0 ? [...new Set(outcome.rewrittenBy)].join(", ") : "an extension"
        return single(
          denied(
            `args rewritten by ${by} no longer fit ${tool.name}'s parameters: ${checked.failure.message}`,
            "parameters"
          )
        )
      }
      if (outcome.decision === "ask" && entry?.approvalRequested !== true) {
        return single(denied(`needs approval, which was not requested: ${formatReasons(outcome.reasons)}`, "handler"))
      }
      // A requested approval is the Approver's to give: an approval effect/ai was told of otherwise (the agent's own
      // tool-approval-response, or `handle` called directly) runs nothing.
      if (entry?.approvalRequested === true && !entry.approved) {
        const reasons = outcome.reasons.length > 0 ? `: ${formatReasons(outcome.reasons)}` : ""
        const why =
          entry === taken ? "which the Approver did not give" : "again: the config was reloaded since it was judged"
        return single(denied(`needs approval, ${why}${reasons}`, "handler"))
      }
      // `settled` decoded above: these are the parameters, encoded, as the handler takes them. The handler is told
      // what was judged (`JudgedCall`): an extension tool's refuses any other params.
      const results = yield* inner
        .handle(name, settled as Tool.ParametersEncoded<Tools[Name]>, toolCallId, options)
        .pipe(Effect.provideService(JudgedCall, { tool: tool.name, args: settled }))
      return results.pipe(
        Stream.filter((result) => !result.preliminary),
        Stream.mapEffect((result) => Effect.map(afterResult(host, tool, outcome, callId, result), narrow<Tools[Name]>))
      )
    })

  // Every approval requested here, the tool's own `needsApproval` too: the Approver sees the args that will run
  // (an extension may have rewritten the model's), with the extensions' reasons (none for the tool's own ask).
  const awaiting = (toolCallId: string): Approval.ApprovalRequest | undefined => {
    const entry = pending.get(toolCallId)
    return entry === undefined || !entry.approvalRequested ? undefined : requestOf(entry)
  }

  const guarded_: Guarded<Tools> = { tools, handle, awaiting }
  // The Approver's yes, for the set in force: what it asks anew (after a reload) is asked again.
  registerApprover(guarded_, (toolCallId) =>
    Effect.suspend(() => {
      const entry = pending.get(toolCallId)
      if (entry?.approvalRequested !== true || entry.approved) return Effect.undefined
      return Effect.map(inForce(host, { ...entry, approved: true }), (now) => {
        // Kept under its id unless a newer call took it meanwhile.
        if (pending.get(toolCallId) === entry) pending.set(toolCallId, now)
        return now.approvalRequested && !now.approved ? requestOf(now) : undefined
      })
    })
  )
  return guarded_
}

/**
 * Guards a handled toolkit (`yield* toolkit` with its handlers provided, or the Toolkit itself as an Effect).
 * Build it once per conversation and pass the result as `toolkit` to every `generateText`/`streamText` call: the
 * outcomes of asked calls are kept in it until the approved turn runs them.
 */
export const guard = <Tools extends Record<string, Tool.Any>, E = never, R = never>(
  toolkit: Toolkit.WithHandler<Tools> | Effect.Effect<Toolkit.WithHandler<Tools>, E, R>
): Effect.Effect<Guarded<Tools>, E | ProviderExecutedTool, R | ExtensionHost> =>
  Effect.gen(function* () {
    const inner = Effect.isEffect(toolkit) ? yield* toolkit : toolkit
    const unjudgeable = providerExecuted(inner.tools)
    if (unjudgeable.length > 0) return yield* new ProviderExecutedTool({ tools: unjudgeable })
    const host = yield* ExtensionHost
    return make(host, inner)
  })

/**
 * The agent's own tools (a Toolkit with its handlers provided, or a handled one) plus the tools extensions declare,
 * all guarded: what an agent gives the model.
 */
export const withExtensionTools = <Tools extends Record<string, Tool.Any>, E = never, R = never>(
  toolkit: Toolkit.WithHandler<Tools> | Effect.Effect<Toolkit.WithHandler<Tools>, E, R>
): Effect.Effect<Guarded<ExtensionToolkit.WithExtensions<Tools>>, E | ProviderExecutedTool, R | ExtensionHost> =>
  Effect.gen(function* () {
    const own = Effect.isEffect(toolkit) ? yield* toolkit : toolkit
    return yield* guard(ExtensionToolkit.merge(own, yield* ExtensionToolkit.make))
  })
