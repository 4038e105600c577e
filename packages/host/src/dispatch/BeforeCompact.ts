import { combineCompact } from "@abhed/core"
import { unsendableField } from "@abhed/protocol"
import type { CompactOutcome } from "../Outcome.ts"
import { refuse, single, type DispatchContext } from "./Dispatch.ts"

/**
 * before_compact (docs/design.md#combination): any cancel wins; otherwise the summaries joined in name order
 * (`combineCompact`). Input the host cannot send is refused as cancelled.
 */

export const beforeCompact = (ctx: DispatchContext, messages: ReadonlyArray<unknown>) => {
  const { sessionId } = ctx
  const unsendable = unsendableField("messages", messages)
  // Cancelled: the restrictive answer (nothing is compacted that no extension could see).
  if (unsendable !== undefined) return refuse(ctx, "before_compact", undefined, unsendable, { cancel: true, summary: null } satisfies CompactOutcome)
  return single(ctx, "before_compact", { event: "before_compact", session_id: sessionId, messages }, (replies) => {
    const { cancel, cancelledBy, summary } = combineCompact(replies)
    return {
      outcome: { cancel, summary: cancel ? null : summary } satisfies CompactOutcome,
      notes: cancel ? [`cancelled by ${cancelledBy.join(", ")}`] : []
    }
  })
}
