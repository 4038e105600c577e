import type { BeforeAgentStartReply } from "@abhed/protocol"
import { combineSystem } from "../SystemPrompt.ts"
import { type Answer, AnswersReducer, type Finished, repliesOf } from "./Answer.ts"

/**
 * before_agent_start (docs/design.md#combination): the extensions' appended texts after the agent's, in name
 * order (`combineSystem`). A failed extension appends nothing: there is nothing to withhold.
 */

export interface Outcome {
  readonly system: string
}

/** The round's answers in name order. */
export const reducer = AnswersReducer<Answer<BeforeAgentStartReply>>()

export const finish = (system: string, answers: ReadonlyArray<Answer<BeforeAgentStartReply>>): Finished<Outcome> => ({
  outcome: { system: combineSystem(system, repliesOf(answers)) },
  notes: []
})
