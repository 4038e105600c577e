import type { ToolResultReply } from "@abhed/protocol"
import { Reducer } from "effect"
import type { RoundReply, SettleOutcome } from "../Settling.ts"
import { unsettledReason } from "../Settling.ts"
import { type Answer, type Finished, notSentNote, onFailureOf } from "./Answer.ts"

/**
 * tool_result (docs/design.md#combination): the content settles over rounds of rewrites; is_error is only ever
 * raised (an extension cannot hide a failure from the model); any failing extension whose on_failure is not
 * ignore withholds the content, and so does a fight that did not settle.
 */

export interface Outcome {
  readonly content: string
  readonly is_error: boolean
  readonly rounds: number
}

/** What the rounds add up to: is_error raised by anyone, and the failures that withhold the content. */
export interface Value {
  readonly isError: boolean
  /** The failures of extensions whose on_failure is not ignore: sorted, each once. */
  readonly withheldBy: ReadonlyArray<string>
}

const quiet: Value = { isError: false, withheldBy: [] }
const raised: Value = { isError: true, withheldBy: [] }

const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): ReadonlyArray<string> =>
  a.length === 0 ? b : b.length === 0 ? a : [...new Set([...a, ...b])].sort()

/** OR of is_error, union of the withholding failures: a commutative monoid (quiet is its identity). */
export const reducer: Reducer.Reducer<Value> = Reducer.make(
  (a, b) =>
    a === quiet
      ? b
      : b === quiet
        ? a
        : { isError: a.isError || b.isError, withheldBy: union(a.withheldBy, b.withheldBy) },
  quiet
)

/** One extension's part: a raise of is_error, or its failure when its on_failure withholds. */
export const valueOf = (answer: Answer<ToolResultReply>): Value =>
  answer.failure !== undefined && onFailureOf(answer) !== "ignore"
    ? { isError: false, withheldBy: [answer.failure] }
    : answer.reply?.is_error === true
      ? raised
      : quiet

/** One extension's part in a round: its rewrite of the content (if any) and its value. */
export const roundReply = (answer: Answer<ToolResultReply>): RoundReply<string, Value> => ({
  name: answer.extension.name,
  proposal: answer.reply?.content,
  value: valueOf(answer)
})

/** Nothing ends the rounds early: a later rewrite may still be one that settles. */
export const stop = (_: Value): boolean => false

const withheld = (why: string, rounds: number): Outcome => ({ content: `[withheld: ${why}]`, is_error: true, rounds })

/** A result no extension saw (args the host cannot send): withheld, as an error the model can read. */
export const refused = (reason: string): Finished<Outcome> => ({
  outcome: withheld(reason, 0),
  notes: [notSentNote(reason)]
})

/** The outcome once the rounds are done; `isError` is the agent's own flag. */
export const finish = (isError: boolean, settled: SettleOutcome<string, Value>): Finished<Outcome> => {
  const { rounds, value } = settled
  const outcome: Outcome =
    value.withheldBy.length > 0
      ? withheld(value.withheldBy.join("; "), rounds)
      : settled._tag === "Unsettled"
        ? withheld(unsettledReason(settled.fighters), rounds)
        : { content: settled.payload, is_error: isError || value.isError, rounds }
  return { outcome, notes: [`settling: ${settled._tag}`] }
}
