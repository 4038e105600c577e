import { IsErrorReducer, settleEffect, unsettledReason, type RoundReply } from "@abhed/core"
import { unsendableField } from "@abhed/protocol"
import { Effect } from "effect"
import type { AuditRound } from "../AuditLog.ts"
import type { ToolResultInput, ToolResultOutcome } from "../Outcome.ts"
import { dispatch, refuse, type DispatchContext, type Dispatched } from "./Dispatch.ts"
import { onFailure } from "./Exchange.ts"
import { auditRound, fanOut, roundField } from "./Round.ts"

/**
 * tool_result (docs/design.md#combination): settle the content over rounds of rewrites; is_error is only ever
 * raised; any failing extension whose on_failure is not ignore withholds the content.
 */

export const toolResult = (ctx: DispatchContext, input: ToolResultInput): Effect.Effect<ToolResultOutcome> =>
  Effect.suspend(() => {
    const { callIdOf, maxRounds, recording, sessionId } = ctx
    const call_id = callIdOf(input.call_id)
    const unsendable = unsendableField("args", input.args)
    if (unsendable !== undefined) {
      const outcome: ToolResultOutcome = { content: `[withheld: ${unsendable}]`, is_error: true, rounds: 0 }
      return refuse(ctx, "tool_result", call_id, unsendable, outcome, input.tool)
    }
    const auditRounds: Array<AuditRound> = []
    const withheldBy: Array<string> = []
    const settled = settleEffect<string, boolean, never, never>({
      initial: input.content,
      reducer: IsErrorReducer,
      stop: () => false,
      maxRounds,
      round: (content, round) =>
        Effect.map(
          fanOut(ctx, "tool_result", {
            event: "tool_result",
            session_id: sessionId,
            call_id,
            tool: input.tool,
            args: input.args,
            content,
            is_error: input.is_error,
            ...roundField(round)
          }),
          ({ exchanges, skipped }) => {
            if (recording) auditRounds.push(auditRound(round, exchanges, skipped))
            for (const x of exchanges) if (onFailure(x) !== "ignore" && x.failure !== undefined) withheldBy.push(x.failure)
            return exchanges.map((x): RoundReply<string, boolean> => ({
              name: x.extension.name,
              proposal: x.reply?.content,
              value: x.reply?.is_error === true
            }))
          }
        )
    })
    return dispatch(
      ctx,
      "tool_result",
      call_id,
      Effect.map(settled, (outcome): Dispatched<ToolResultOutcome> => {
        const isError = input.is_error || outcome.value
        const result: ToolResultOutcome = withheldBy.length > 0
          ? { content: `[withheld: ${[...new Set(withheldBy)].sort().join("; ")}]`, is_error: true, rounds: outcome.rounds }
          : outcome._tag === "Unsettled"
          ? {
            content: `[withheld: ${unsettledReason(outcome.fighters)}]`,
            is_error: true,
            rounds: outcome.rounds
          }
          : { content: outcome.payload, is_error: isError, rounds: outcome.rounds }
        return { outcome: result, rounds: auditRounds, notes: recording ? [`settling: ${outcome._tag}`] : [] }
      }),
      { tool: input.tool, args: input.args }
    )
  })
