import { type ListToolsReply, ToolNameRule } from "@abhed/protocol"
import { combineTools, type RejectedTool, type RejectionReason, type ToolsOutcome } from "../ToolRegistry.ts"
import { type Answer, AnswersReducer, type Finished, repliesOf } from "./Answer.ts"

/**
 * list_tools (docs/design.md#combination): the tools extensions declare, minus the names rejected
 * (`combineTools`), each rejection with its note.
 */

export type Outcome = ToolsOutcome

/** The round's answers in name order. */
export const reducer = AnswersReducer<Answer<ListToolsReply>>()

const rejection: { readonly [R in RejectionReason]: string } = {
  invalid_name: `not a valid tool name (${ToolNameRule}; not __proto__)`,
  builtin: "collides with a built-in tool (names compare ignoring case)",
  duplicate: "declared more than once (names compare ignoring case)",
  input_schema: "invalid input_schema"
}

/** A tool name for a note, with every character outside printable ASCII escaped: a look-alike must show. */
const quoteToolName = (name: string): string =>
  `"${name.replace(/[^\x20-\x7e]|["\\]/g, (c) => (c === '"' || c === "\\" ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`))}"`

/** The note (and startup warning) for a rejected tool. */
export const rejectedNote = (r: RejectedTool): string =>
  `tool ${quoteToolName(r.name)} rejected for ${r.extensions.join(", ")}: ${rejection[r.reason]}${r.detail !== undefined ? `: ${r.detail}` : ""}`

/** `builtin`: the agent's own tools, which no extension may shadow. */
export const finish = (
  builtin: ReadonlyArray<string>,
  answers: ReadonlyArray<Answer<ListToolsReply>>
): Finished<Outcome> => {
  const outcome = combineTools(builtin, repliesOf(answers))
  return { outcome, notes: outcome.rejected.map(rejectedNote) }
}
