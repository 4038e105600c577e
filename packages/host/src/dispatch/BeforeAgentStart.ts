import { combineSystem } from "@abhed/core"
import type { SystemOutcome } from "../Outcome.ts"
import { single, type DispatchContext } from "./Dispatch.ts"

/**
 * before_agent_start (docs/design.md#combination): the extensions' appended texts, in name order (`combineSystem`).
 */

export const beforeAgentStart = (ctx: DispatchContext, system: string) =>
  single(ctx, "before_agent_start", { event: "before_agent_start", session_id: ctx.sessionId, system }, (replies) => ({
    outcome: { system: combineSystem(system, replies) } satisfies SystemOutcome,
    notes: []
  }))
