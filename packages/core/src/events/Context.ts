import { type ContextReply, shapeJson } from "@abhed/protocol"
import { combineKeep } from "../ContextKeep.ts"
import type { Reason } from "../Verdict.ts"
import {
  type Answer,
  AnswersReducer,
  type Finished,
  hostReasons,
  notSentNote,
  onFailureOf,
  repliesOf
} from "./Answer.ts"

/**
 * context (docs/design.md#combination): the intersection of the kept index sets (`combineKeep`); a failing filter
 * whose on_failure is not ignore withholds the whole context ("ask" acts as "deny": nobody can be asked
 * mid-turn), since what it was there to hold back cannot be told from the rest.
 */

export interface Outcome {
  readonly keep: ReadonlyArray<number>
  readonly messages: ReadonlyArray<unknown>
  /**
   * Why nothing is kept, when a failure withheld the whole context (docs/design.md#failures): a failed or dead filter
   * with `on_failure` "deny" or "ask", or messages the host could not send. Empty otherwise. When non-empty, `keep`
   * and `messages` are empty: the agent should stop the turn rather than send what a filter was there to hold back.
   */
  readonly withheld: ReadonlyArray<Reason>
}

/** The round's answers in name order. */
export const reducer = AnswersReducer<Answer<ContextReply>>()

/** A keep element for a note: a number as it is, anything else by its shape (strings by their length: `shapeJson`). */
const showIndex = (i: unknown): string => (typeof i === "number" ? String(i) : shapeJson(i, 40))

/** Messages no filter saw (the host cannot send them): withheld, with the host's reason. */
export const refused = (reason: string): Finished<Outcome> => ({
  outcome: { keep: [], messages: [], withheld: hostReasons(reason) },
  notes: [notSentNote(reason)]
})

/** The outcome of one round; `answers` in name order (`reducer`'s values are). */
export const finish = (
  messages: ReadonlyArray<unknown>,
  answers: ReadonlyArray<Answer<ContextReply>>
): Finished<Outcome> => {
  const withheld: Array<Reason> = []
  for (const a of answers) {
    if (a.reply === undefined && a.failure !== undefined && onFailureOf(a) !== "ignore") {
      withheld.push({ extension: a.extension.name, reason: a.failure })
    }
  }
  const { keep, outOfRange } = combineKeep(messages.length, repliesOf(answers))
  const notes = outOfRange.map(
    (o) => `${o.extension}: keep indices that name no message ignored: ${o.indices.map(showIndex).join(", ")}`
  )
  if (withheld.length > 0) {
    return {
      outcome: { keep: [], messages: [], withheld },
      notes: [...notes, ...withheld.map((w) => `context withheld: ${w.reason}`)]
    }
  }
  const kept: Array<unknown> = []
  for (const i of keep) kept.push(messages[i])
  return { outcome: { keep, messages: kept, withheld }, notes }
}
