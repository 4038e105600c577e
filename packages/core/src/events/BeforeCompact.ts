import type { BeforeCompactReply } from "@abhed/protocol"
import { combineCompact } from "../Compaction.ts"
import { type Answer, AnswersReducer, type Finished, notSentNote, repliesOf } from "./Answer.ts"

/**
 * before_compact (docs/design.md#combination): any cancel wins (keeping history is the conservative choice);
 * otherwise the summaries joined in name order (`combineCompact`).
 */

export interface Outcome {
  readonly cancel: boolean
  /** The supplied summary, or null: the agent writes its own. */
  readonly summary: string | null
}

/** The round's answers in name order. */
export const reducer = AnswersReducer<Answer<BeforeCompactReply>>()

/** Messages no extension saw (the host cannot send them): cancelled, so nothing is compacted unseen. */
export const refused = (reason: string): Finished<Outcome> => ({
  outcome: { cancel: true, summary: null },
  notes: [notSentNote(reason)]
})

export const finish = (answers: ReadonlyArray<Answer<BeforeCompactReply>>): Finished<Outcome> => {
  const { cancel, cancelledBy, summary } = combineCompact(repliesOf(answers))
  return {
    outcome: { cancel, summary: cancel ? null : summary },
    notes: cancel ? [`cancelled by ${cancelledBy.join(", ")}`] : []
  }
}
