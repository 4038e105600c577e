import { InvokeToolRule, type AcceptedTool } from "@abhed/core"
import { unsendableField, type RequestBody } from "@abhed/protocol"
import { Effect } from "effect"
import type { Extension } from "../Extension.ts"
import { ToolOwnerUnavailable, UnknownTool } from "../HostError.ts"
import type { InvokeToolInput, InvokeToolOutcome } from "../Outcome.ts"
import { dispatch, refuse, type DispatchContext } from "./Dispatch.ts"
import { exchange } from "./Exchange.ts"
import { auditRound, encodeRound } from "./Round.ts"

/**
 * invoke_tool (docs/design.md#wire-protocol): routed to the one extension that declared the tool; its answer is
 * the rule's (core's events/InvokeTool.ts).
 */

/** `tools` are the ones accepted at startup; `extensions` the host's, in name order. */
export const invokeTool = (
  ctx: DispatchContext,
  tools: ReadonlyArray<AcceptedTool>,
  extensions: ReadonlyArray<Extension>,
  call: InvokeToolInput
) =>
  Effect.gen(function* () {
    const { callIdOf, recording, reported, sessionId } = ctx
    if (call.refused !== undefined) {
      // An attempt the audit keeps: which tool, with what args (unless they cannot be sent), and why not.
      const refused = InvokeToolRule.refused(call.refused)
      const args = unsendableField("args", call.args) === undefined ? { args: call.args } : {}
      return yield* dispatch<InvokeToolOutcome>(
        ctx,
        "invoke_tool",
        callIdOf(call.call_id),
        (then) =>
          Effect.sync(() => then({ outcome: refused.outcome, rounds: [], notes: recording ? refused.notes : [] })),
        { tool: call.tool, ...args }
      )
    }
    const entry = tools.find((t) => t.tool.name === call.tool)
    if (entry === undefined) return yield* new UnknownTool({ tool: call.tool })
    const owner = extensions.find((x) => x.name === entry.extension)
    if (owner === undefined) return yield* new UnknownTool({ tool: call.tool })
    const call_id = callIdOf(call.call_id)
    const unsendable = unsendableField("args", call.args)
    if (unsendable !== undefined) {
      // Not sent to the owner: an error result the model can read, like any failed tool.
      return yield* refuse(ctx, "invoke_tool", call_id, InvokeToolRule.refused(unsendable), call.tool)
    }
    const value: RequestBody<"invoke_tool"> = {
      event: "invoke_tool",
      session_id: sessionId,
      call_id,
      tool: call.tool,
      args: call.args
    }
    // Routed to the one owner only, whatever its `events` say: it declared the tool.
    const result = yield* dispatch<InvokeToolRule.Answered>(
      ctx,
      "invoke_tool",
      call_id,
      (then) =>
        Effect.map(exchange(owner, encodeRound(ctx, "invoke_tool", value), reported), (x) => {
          const { notes, outcome } = InvokeToolRule.finish(x, x.error ?? x.status)
          return then({ outcome, rounds: recording ? [auditRound(1, [x], [])] : [], notes })
        }),
      { tool: call.tool, args: call.args }
    )
    if (result._tag === "failed") {
      return yield* new ToolOwnerUnavailable({ tool: call.tool, extension: owner.name, cause: result.cause })
    }
    return { result: result.result, is_error: result.is_error } satisfies InvokeToolOutcome
  })
