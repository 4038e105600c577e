import { ListToolsRule, type ToolsOutcome } from "@abhed/core"
import { Effect } from "effect"
import { printable } from "../Printable.ts"
import { single, type DispatchContext } from "./Dispatch.ts"

/** list_tools: one round, its rule's (core's events/ListTools.ts). */

/** The note (and startup warning) for a rejected tool. */
export const rejectedNote = ListToolsRule.rejectedNote

/**
 * Said where the operator looks, not only in the audit, when a set starts: each rejected tool (one the model will
 * never see) and each warning an extension gave with its tools (made printable: they are its words).
 */
export const sayAtStart = (tools: ToolsOutcome): Effect.Effect<void> =>
  Effect.andThen(
    Effect.forEach(tools.rejected, (r) => Effect.logWarning(rejectedNote(r)), { discard: true }),
    Effect.forEach(tools.warnings ?? [], (w) => Effect.logWarning(printable(ListToolsRule.warningNote(w))), {
      discard: true
    })
  )

export const listTools = (ctx: DispatchContext) =>
  single(ctx, "list_tools", { event: "list_tools", session_id: ctx.sessionId }, (_, exchanges) =>
    ListToolsRule.finish(ctx.builtin, exchanges)
  )
