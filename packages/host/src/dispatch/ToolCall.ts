import {
  evaluateLayerPolicies,
  evaluatePolicy,
  evaluateRules,
  ToolCallRule,
  type PolicyDecision,
  type SettleOutcome,
  type Verdict
} from "@abhed/core"
import { type JsonObject, type RequestBody, unsendableField } from "@abhed/protocol"
import { Effect } from "effect"
import type { AuditRound } from "../AuditLog.ts"
import type { ToolCallInput, ToolCallOutcome } from "../Outcome.ts"
import { dispatch, refuse, type DispatchContext, type Dispatched } from "./Dispatch.ts"
import { roundField } from "./Round.ts"
import { settleRounds } from "./Settle.ts"

/**
 * tool_call: rounds of rewrites until the args settle, then the policy on the settled args; what they add up to
 * is the rule's (core's events/ToolCall.ts). Here: the rounds, the policy's evaluation and the audit.
 */

// The common case (one round, nobody rewrites, no policy hook) is: the fan-out, then synchronous steps.
// Made when the call runs, not suspended again: the host calls it inside `Reload.using`'s callback, once per run (a
// call id is made here). Another caller wraps it in `Effect.suspend`.
export const toolCall = (ctx: DispatchContext, call: ToolCallInput): Effect.Effect<ToolCallOutcome> => {
  const { callIdOf, hooks, policies, policy, recording, sessionId } = ctx
  const call_id = callIdOf(call.call_id)
  const unsendable = unsendableField("args", call.args)
  if (unsendable !== undefined) {
    return refuse(ctx, "tool_call", call_id, ToolCallRule.refused(unsendable), call.tool)
  }
  if (call.refused !== undefined) {
    // Refused by the agent before any extension could judge it: audited with its args, sent to nobody.
    const { notes, outcome } = ToolCallRule.refused(call.refused)
    return dispatch(
      ctx,
      "tool_call",
      call_id,
      (then) => Effect.sync(() => then({ outcome, rounds: [], notes: recording ? notes : [] })),
      { tool: call.tool, args: call.args }
    )
  }
  const auditRounds: Array<AuditRound> = []
  const settled = settleRounds(
    ctx,
    "tool_call",
    ToolCallRule,
    call.args,
    (args, round): RequestBody<"tool_call"> => ({
      event: "tool_call",
      session_id: sessionId,
      call_id,
      tool: call.tool,
      args,
      ...roundField(round)
    }),
    auditRounds
  )
  const finish = (
    outcome: SettleOutcome<JsonObject, Verdict>,
    decision: PolicyDecision
  ): Dispatched<ToolCallOutcome> => {
    // Notes only for a sink that keeps them: two strings per dispatch otherwise made for nothing.
    if (!recording) return { outcome: ToolCallRule.outcomeOf(outcome, decision), rounds: auditRounds, notes: [] }
    const finished = ToolCallRule.finish(outcome, decision)
    return { outcome: finished.outcome, rounds: auditRounds, notes: finished.notes }
  }
  return dispatch(
    ctx,
    "tool_call",
    call_id,
    (then) =>
      // No hooks (the common case): the rules are plain synchronous code, in the rounds' last step.
      policies === undefined && hooks.length === 0
        ? Effect.map(settled, (outcome) =>
            then(finish(outcome, evaluateRules(policy, { tool: call.tool, args: outcome.payload })))
          )
        : Effect.flatMap(settled, (outcome) =>
            Effect.map(
              policies !== undefined
                ? evaluateLayerPolicies(policies, hooks, { tool: call.tool, args: outcome.payload })
                : evaluatePolicy(policy, hooks, { tool: call.tool, args: outcome.payload }),
              (d) => then(finish(outcome, d))
            )
          ),
    { tool: call.tool, args: call.args }
  )
}
