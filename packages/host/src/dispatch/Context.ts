import { ContextRule } from "@abhed/core"
import { unsendableField } from "@abhed/protocol"
import { refuse, single, type DispatchContext } from "./Dispatch.ts"

/** context: one round, its rule's (core's events/Context.ts); input the host cannot send is refused. */

export const context = (ctx: DispatchContext, messages: ReadonlyArray<unknown>) => {
  const unsendable = unsendableField("messages", messages)
  if (unsendable !== undefined) return refuse(ctx, "context", undefined, ContextRule.refused(unsendable))
  // The exchanges are in name order: the rule's reduced form as they are.
  return single(ctx, "context", { event: "context", session_id: ctx.sessionId, messages }, (_, exchanges) => {
    const finished = ContextRule.finish(messages, exchanges)
    // The messages as sent, when a filter sent a keep (even one that kept everything) or the context was withheld:
    // without either, every message is kept in order, so a record without them is one nothing touched.
    const kept = exchanges.some((x) => x.reply?.keep !== undefined && x.reply.keep !== null)
    const changed = kept || finished.outcome.withheld.length > 0
    return ctx.recording && changed ? { ...finished, input: { messages } } : finished
  })
}
