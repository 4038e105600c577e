import { ToolResultRule } from "@abhed/core"
import { type RequestBody, unsendableField } from "@abhed/protocol"
import { Effect } from "effect"
import type { AuditRound } from "../AuditLog.ts"
import type { ToolResultInput, ToolResultOutcome } from "../Outcome.ts"
import { dispatch, refuse, type DispatchContext, type Dispatched } from "./Dispatch.ts"
import { roundField } from "./Round.ts"
import { settleRounds } from "./Settle.ts"

/**
 * tool_result: rounds of rewrites until the content settles; what they add up to is the rule's (core's
 * events/ToolResult.ts). Here: the rounds and the audit.
 */

// Made when the result runs, not suspended again: the host calls it inside `Reload.using`'s callback, once per run (a
// call id is made here). Another caller wraps it in `Effect.suspend`.

export const toolResult = (ctx: DispatchContext, input: ToolResultInput): Effect.Effect<ToolResultOutcome> => {
  const { callIdOf, recording, sessionId } = ctx
  const call_id = callIdOf(input.call_id)
  const unsendable = unsendableField("args", input.args)
  if (unsendable !== undefined) {
    return refuse(ctx, "tool_result", call_id, ToolResultRule.refused(unsendable), input.tool)
  }
  const auditRounds: Array<AuditRound> = []
  const settled = settleRounds(
    ctx,
    "tool_result",
    ToolResultRule,
    input.content,
    (content, round): RequestBody<"tool_result"> => ({
      event: "tool_result",
      session_id: sessionId,
      call_id,
      tool: input.tool,
      args: input.args,
      content,
      is_error: input.is_error,
      ...roundField(round)
    }),
    auditRounds
  )
  const finish = (outcome: Effect.Success<typeof settled>): Dispatched<ToolResultOutcome> => {
    const { notes, outcome: result } = ToolResultRule.finish(input.is_error, outcome)
    if (!recording) return { outcome: result, rounds: auditRounds, notes: [] }
    // What the agent passed, unless it came out as it went in and no extension acted on it: more rounds than
    // one means a rewrite (even one later undone); an is_error raised over the agent's own is an act too. So
    // a record without it is one nothing touched, never one whose input is unknown.
    const changed =
      result.content !== input.content ||
      result.is_error !== input.is_error ||
      result.rounds > 1 ||
      outcome.value.isError
    return {
      outcome: result,
      rounds: auditRounds,
      notes,
      ...(changed ? { input: { content: input.content, is_error: input.is_error } } : {})
    }
  }
  return dispatch(ctx, "tool_result", call_id, (then) => Effect.map(settled, (outcome) => then(finish(outcome))), {
    tool: input.tool,
    args: input.args
  })
}
