import { type Answer, type RoundReply, type SettleOutcome, settleNow } from "@abhed/core"
import type { EventName, ReplyOf, RequestBody } from "@abhed/protocol"
import { Effect, type Reducer } from "effect"
import type { AuditRound } from "../AuditLog.ts"
import type { DispatchContext } from "./Dispatch.ts"
import { auditRound, fanOut } from "./Round.ts"

/**
 * The rounds of an event whose payload extensions may rewrite (tool_call's args, tool_result's content): fanned out
 * until the payload settles, each round's answers read by the event's rule (core's events/ToolCall.ts,
 * ToolResult.ts), and each round audited when the sink records.
 */

/** What a rewriting event's rule gives its rounds. */
export interface RoundRule<E extends EventName, P, V> {
  /** Folds every answer of every round into one value. */
  readonly reducer: Reducer.Reducer<V>
  /** Ends the rounds at once (a deny). */
  readonly stop: (value: V) => boolean
  /** One extension's proposal and value in a round. */
  readonly roundReply: (answer: Answer<ReplyOf<E>>) => RoundReply<P, V>
}

/** Begun now (`settleNow`): the events make it as their call runs, and run it once. */
export const settleRounds = <E extends EventName, P, V>(
  ctx: DispatchContext,
  event: E,
  rule: RoundRule<E, P, V>,
  initial: P,
  body: (payload: P, round: number) => RequestBody<E>,
  /** Filled with each round's audit entry when recording. */
  auditRounds: Array<AuditRound>
): Effect.Effect<SettleOutcome<P, V>> =>
  settleNow<P, V, never, never>({
    initial,
    reducer: rule.reducer,
    stop: rule.stop,
    maxRounds: ctx.maxRounds,
    round: (payload, round) =>
      fanOut(ctx, event, body(payload, round), undefined, ({ exchanges, skipped }) => {
        if (ctx.recording) auditRounds.push(auditRound(round, exchanges, skipped))
        return exchanges.map(rule.roundReply)
      })
  })
