import { BeforeCompactRule } from "@abhed/core"
import { unsendableField } from "@abhed/protocol"
import { refuse, single, type DispatchContext } from "./Dispatch.ts"

/** before_compact: one round, its rule's (core's events/BeforeCompact.ts); input the host cannot send is refused. */

export const beforeCompact = (ctx: DispatchContext, messages: ReadonlyArray<unknown>) => {
  const unsendable = unsendableField("messages", messages)
  if (unsendable !== undefined) {
    return refuse(ctx, "before_compact", undefined, BeforeCompactRule.refused(unsendable))
  }
  return single(
    ctx,
    "before_compact",
    { event: "before_compact", session_id: ctx.sessionId, messages },
    (_, exchanges) => BeforeCompactRule.finish(exchanges)
  )
}
