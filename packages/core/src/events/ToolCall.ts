import type { JsonObject, ToolCallReply } from "@abhed/protocol"
import { decide, type FinalDecision } from "../Decision.ts"
import type { PolicyDecision } from "../Policy.ts"
import { type RoundReply, type SettleOutcome, unsettledReason } from "../Settling.ts"
import { ask, deny, fromToolCallReply, join, none, type Reason, type Verdict, VerdictReducer } from "../Verdict.ts"
import { type Answer, type Finished, hostReasons, notSentNote, onFailureOf } from "./Answer.ts"

/**
 * tool_call (docs/design.md#combination): the args settle over rounds of rewrites; every round's verdicts are
 * joined (none < ask < deny), a failed guard's being its on_failure's; an unsettled fight is a deny of every
 * fighter; then the policy's decision on the settled args is joined with the verdict (`decide`). An extension can
 * only make a call stricter.
 */

export interface Outcome {
  readonly decision: FinalDecision
  readonly reasons: ReadonlyArray<Reason>
  /** The settled args: what every subscriber saw in the last round, and what the tool must run with. */
  readonly args: JsonObject
  readonly rounds: number
  /**
   * Whose rewrite was adopted after each round, in round order (empty: the args are the model's). Optional so a
   * plain mock can leave it out; the host always fills it in.
   */
  readonly rewrittenBy?: ReadonlyArray<string> | undefined
}

/** The verdicts of all rounds, joined: a commutative monoid, so replies fold in any order. */
export const reducer = VerdictReducer

/** A deny ends the rounds at once: nothing a later round says can lower it. */
export const stop = (verdict: Verdict): boolean => verdict.level === "deny"

/** One extension's verdict: its reply's, or its on_failure's when it failed ("ignore" is no verdict). */
export const verdictOf = (answer: Answer<ToolCallReply>): Verdict => {
  const name = answer.extension.name
  if (answer.reply !== undefined) return fromToolCallReply(name, answer.reply)
  const mode = onFailureOf(answer)
  const failure = answer.failure ?? ""
  return mode === "deny" ? deny(name, failure) : mode === "ask" ? ask(name, failure) : none
}

/** One extension's part in a round: its rewrite of the args (if any) and its verdict. */
export const roundReply = (answer: Answer<ToolCallReply>): RoundReply<JsonObject, Verdict> => ({
  name: answer.extension.name,
  proposal: answer.reply?.args,
  value: verdictOf(answer)
})

/**
 * A call no extension saw (args the host cannot send, or refused by the agent itself): denied with the host's
 * reason, and nothing of the args is kept (the call must not run).
 */
export const refused = (reason: string): Finished<Outcome> => ({
  outcome: { decision: "deny", reasons: hostReasons(reason), args: {}, rounds: 0 },
  notes: [notSentNote(reason)]
})

/** The verdict of the rounds: an unsettled fight adds a deny naming everyone who proposed in any round. */
export const verdictOfRounds = (settled: SettleOutcome<JsonObject, Verdict>): Verdict =>
  settled._tag === "Unsettled"
    ? join(settled.value, {
        level: "deny",
        // Everyone who proposed in any round: with two fighters, the last round names only one of them.
        reasons: settled.fighters.map((name) => ({ extension: name, reason: unsettledReason(settled.fighters) }))
      })
    : settled.value

/** The outcome once the rounds are done and the policy has decided on the settled args (`finish` without notes). */
export const outcomeOf = (settled: SettleOutcome<JsonObject, Verdict>, policy: PolicyDecision): Outcome => {
  const decision = decide(policy, verdictOfRounds(settled))
  return {
    decision: decision.decision,
    reasons: decision.reasons,
    args: settled.payload,
    rounds: settled.rounds,
    rewrittenBy: settled.adopted
  }
}

/** The outcome, and the notes the audit records with it. */
export const finish = (settled: SettleOutcome<JsonObject, Verdict>, policy: PolicyDecision): Finished<Outcome> => ({
  outcome: outcomeOf(settled, policy),
  notes: [`policy: ${policy.level} (${policy.source})`, `settling: ${settled._tag}`]
})
