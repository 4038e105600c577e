import { BeforeAgentStartRule } from "@abhed/core"
import { single, type DispatchContext } from "./Dispatch.ts"

/** before_agent_start: one round, its rule's (core's events/BeforeAgentStart.ts). */

export const beforeAgentStart = (ctx: DispatchContext, system: string) =>
  single(
    ctx,
    "before_agent_start",
    { event: "before_agent_start", session_id: ctx.sessionId, system },
    (_, exchanges) => BeforeAgentStartRule.finish(system, exchanges)
  )
