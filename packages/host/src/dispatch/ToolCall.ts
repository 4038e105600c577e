import {
  ask as askVerdict,
  decide,
  deny as denyVerdict,
  evaluateLayerPolicies,
  evaluatePolicy,
  evaluateRules,
  fromToolCallReply,
  join,
  none,
  settleEffect,
  unsettledReason,
  VerdictReducer,
  type PolicyDecision,
  type SettleOutcome,
  type RoundReply,
  type Verdict
} from "@abhed/core"
import { unsendableField, type JsonObject } from "@abhed/protocol"
import { Effect } from "effect"
import type { AuditRound } from "../AuditLog.ts"
import type { ToolCallInput, ToolCallOutcome } from "../Outcome.ts"
import { dispatch, hostReason, refuse, type DispatchContext, type Dispatched } from "./Dispatch.ts"
import { onFailure, type Exchange } from "./Exchange.ts"
import { auditRound, fanOut, roundField } from "./Round.ts"

/**
 * tool_call (docs/design.md#combination): settle the args over rounds of rewrites, join every round's verdicts
 * (a failed guard's is its on_failure's), then the policy on the settled args.
 */

/** One extension's verdict in a tool_call round: its reply's, or its on_failure's when it failed. */
const verdictOf = (x: Exchange<"tool_call">): RoundReply<JsonObject, Verdict> => {
  const name = x.extension.name
  if (x.reply !== undefined) return { name, proposal: x.reply.args, value: fromToolCallReply(name, x.reply) }
  const mode = onFailure(x)
  const failure = x.failure ?? ""
  const verdict = mode === "deny" ? denyVerdict(name, failure) : mode === "ask" ? askVerdict(name, failure) : none
  return { name, proposal: undefined, value: verdict }
}

// The common case (one round, nobody rewrites, no policy hook) is: the fan-out, then synchronous steps.
export const toolCall = (ctx: DispatchContext, call: ToolCallInput): Effect.Effect<ToolCallOutcome> =>
  Effect.suspend(() => {
    const { callIdOf, hooks, maxRounds, policies, policy, recording, sessionId } = ctx
    const call_id = callIdOf(call.call_id)
    const unsendable = unsendableField("args", call.args)
    if (unsendable !== undefined) {
      // Denied, and nothing of the args is kept: the call must not run, and they cannot be encoded safely.
      const outcome: ToolCallOutcome = { decision: "deny", reasons: hostReason(unsendable), args: {}, rounds: 0 }
      return refuse(ctx, "tool_call", call_id, unsendable, outcome, call.tool)
    }
    if (call.refused !== undefined) {
      // Refused by the agent before any extension could judge it: audited with its args, sent to nobody.
      const outcome: ToolCallOutcome = { decision: "deny", reasons: hostReason(call.refused), args: {}, rounds: 0 }
      const notes = recording ? [`not sent to any extension: ${call.refused}`] : []
      return dispatch(ctx, "tool_call", call_id, Effect.succeed({ outcome, rounds: [], notes }), { tool: call.tool, args: call.args })
    }
    const auditRounds: Array<AuditRound> = []
    const settled = settleEffect<JsonObject, Verdict, never, never>({
      initial: call.args,
      reducer: VerdictReducer,
      stop: (v) => v.level === "deny",
      maxRounds,
      round: (args, round) =>
        Effect.map(
          fanOut(ctx, "tool_call", { event: "tool_call", session_id: sessionId, call_id, tool: call.tool, args, ...roundField(round) }),
          ({ exchanges, skipped }) => {
            if (recording) auditRounds.push(auditRound(round, exchanges, skipped))
            return exchanges.map(verdictOf)
          }
        )
    })
    const finish = (outcome: SettleOutcome<JsonObject, Verdict>, policyDecision: PolicyDecision): Dispatched<ToolCallOutcome> => {
      const verdict = outcome._tag === "Unsettled"
        ? join(outcome.value, {
          level: "deny",
          // Everyone who proposed in any round: with two fighters, the last round names only one of them.
          reasons: outcome.fighters.map((name) => ({ extension: name, reason: unsettledReason(outcome.fighters) }))
        })
        : outcome.value
      const decision = decide(policyDecision, verdict)
      return {
        outcome: {
          decision: decision.decision,
          reasons: decision.reasons,
          args: outcome.payload,
          rounds: outcome.rounds,
          rewrittenBy: outcome.adopted
        },
        rounds: auditRounds,
        notes: recording ? [`policy: ${policyDecision.level} (${policyDecision.source})`, `settling: ${outcome._tag}`] : []
      }
    }
    return dispatch(
      ctx,
      "tool_call",
      call_id,
      Effect.flatMap(settled, (outcome) =>
        // No hooks (the common case): the rules are plain synchronous code.
        policies !== undefined
          ? Effect.map(evaluateLayerPolicies(policies, hooks, { tool: call.tool, args: outcome.payload }), (d) => finish(outcome, d))
          : hooks.length === 0
          ? Effect.succeed(finish(outcome, evaluateRules(policy, { tool: call.tool, args: outcome.payload })))
          : Effect.map(evaluatePolicy(policy, hooks, { tool: call.tool, args: outcome.payload }), (d) => finish(outcome, d))),
      { tool: call.tool, args: call.args }
    )
  })
