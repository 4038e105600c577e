import { combineKeep, type Reason } from "@abhed/core"
import { shapeJson, unsendableField } from "@abhed/protocol"
import type { ContextOutcome } from "../Outcome.ts"
import { hostReason, refuse, single, type DispatchContext } from "./Dispatch.ts"
import { onFailure } from "./Exchange.ts"

/**
 * context (docs/design.md#combination): the intersection of the kept sets; a failing filter whose on_failure is
 * not ignore keeps nothing.
 */

/** A keep element for a note: a number as it is, anything else by its shape (strings by their length: `shapeJson`). */
const showIndex = (i: unknown): string => (typeof i === "number" ? String(i) : shapeJson(i, 40))

export const context = (ctx: DispatchContext, messages: ReadonlyArray<unknown>) => {
  const { recording, sessionId } = ctx
  const unsendable = unsendableField("messages", messages)
  if (unsendable !== undefined) {
    const outcome: ContextOutcome = { keep: [], messages: [], withheld: hostReason(unsendable) }
    return refuse(ctx, "context", undefined, unsendable, outcome)
  }
  return single(ctx, "context", { event: "context", session_id: sessionId, messages }, (replies, exchanges) => {
    // "ask" acts as "deny": nobody can be asked mid-turn (docs/design.md#failures). Exchanges are in name order.
    const withheld: Array<Reason> = []
    for (const x of exchanges) {
      if (x.reply === undefined && x.failure !== undefined && onFailure(x) !== "ignore") {
        withheld.push({ extension: x.extension.name, reason: x.failure })
      }
    }
    const { keep, outOfRange } = combineKeep(messages.length, replies)
    const notes = recording
      ? outOfRange.map((o) => `${o.extension}: keep indices that name no message ignored: ${o.indices.map(showIndex).join(", ")}`)
      : []
    if (withheld.length > 0) {
      const outcome: ContextOutcome = { keep: [], messages: [], withheld }
      return { outcome, notes: recording ? [...notes, ...withheld.map((w) => `context withheld: ${w.reason}`)] : [] }
    }
    const kept: Array<unknown> = []
    for (const i of keep) kept.push(messages[i])
    return { outcome: { keep, messages: kept, withheld }, notes }
  })
}
