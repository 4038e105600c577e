import { ContextRule } from "@abhed/core"
import { unsendableField } from "@abhed/protocol"
import { refuse, single, type DispatchContext } from "./Dispatch.ts"

/** context: one round, its rule's (core's events/Context.ts); input the host cannot send is refused. */

export const context = (ctx: DispatchContext, messages: ReadonlyArray<unknown>) => {
  const unsendable = unsendableField("messages", messages)
  if (unsendable !== undefined) return refuse(ctx, "context", undefined, unsendable, ContextRule.refused(unsendable).outcome)
  // The exchanges are in name order: the rule's reduced form as they are.
  return single(ctx, "context", { event: "context", session_id: ctx.sessionId, messages }, (_, exchanges) => {
    const finished = ContextRule.finish(messages, exchanges)
    return ctx.recording && !keptAll(messages, finished.outcome) ? { ...finished, input: { messages } } : finished
  })
}

/** Every message kept, in order, nothing withheld: the outcome's messages are the input. */
const keptAll = (messages: ReadonlyArray<unknown>, outcome: ContextRule.Outcome): boolean =>
  outcome.withheld.length === 0 && outcome.keep.length === messages.length && outcome.keep.every((k, i) => k === i)
