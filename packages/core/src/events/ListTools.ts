import { type ListToolsReply, ToolNameRule } from "@abhed/protocol"
import type { Named } from "../Named.ts"
import {
  combineTools,
  type RejectedTool,
  type RejectionReason,
  type ToolsOutcome,
  type ToolWarning
} from "../ToolRegistry.ts"
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

/** The most warnings of one extension kept, and the most characters of each: the operator's log is not its to fill. */
export const MaxWarnings = 20
export const WarningMax = 200

/** Each extension's warnings, in name order, bounded (`MaxWarnings`, `WarningMax`). */
const warningsOf = (replies: ReadonlyArray<Named<ListToolsReply>>): Array<ToolWarning> => {
  const out: Array<ToolWarning> = []
  for (const { name, value } of replies) {
    const given = value.warnings ?? []
    for (const text of given.slice(0, MaxWarnings))
      out.push({ extension: name, text: text.length > WarningMax ? `${text.slice(0, WarningMax - 1)}…` : text })
    if (given.length > MaxWarnings)
      out.push({ extension: name, text: `and ${given.length - MaxWarnings} more warnings, not shown` })
  }
  return out
}

/** The note (and startup warning) for an extension's warning. */
export const warningNote = (w: ToolWarning): string => `extension ${w.extension} warns: ${w.text}`

/** `builtin`: the agent's own tools, which no extension may shadow. */
export const finish = (
  builtin: ReadonlyArray<string>,
  answers: ReadonlyArray<Answer<ListToolsReply>>
): Finished<Outcome> => {
  const replies = repliesOf(answers)
  const combined = combineTools(builtin, replies)
  const warnings = warningsOf(replies)
  const outcome = warnings.length === 0 ? combined : { ...combined, warnings }
  return { outcome, notes: [...outcome.rejected.map(rejectedNote), ...warnings.map(warningNote)] }
}
