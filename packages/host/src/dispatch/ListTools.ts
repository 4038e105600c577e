import { ListToolsRule } from "@abhed/core"
import { single, type DispatchContext } from "./Dispatch.ts"

/** list_tools: one round, its rule's (core's events/ListTools.ts). */

/** The note (and startup warning) for a rejected tool. */
export const rejectedNote = ListToolsRule.rejectedNote

export const listTools = (ctx: DispatchContext) =>
  single(ctx, "list_tools", { event: "list_tools", session_id: ctx.sessionId }, (_, exchanges) =>
    ListToolsRule.finish(ctx.builtin, exchanges)
  )
