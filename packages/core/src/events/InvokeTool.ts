import type { InvokeToolReply } from "@abhed/protocol"
import { type Answer, type Finished, notSentNote } from "./Answer.ts"

/**
 * invoke_tool (docs/design.md#wire-protocol): routed to the one extension that declared the tool; its reply is the
 * result. An owner that failed gives no result: the caller reports it unavailable (there is nothing to combine).
 */

export interface Outcome {
  readonly result: unknown
  readonly is_error: boolean
}

/** The owner's answer: its result, or why it gave none. */
export type Answered =
  | { readonly _tag: "ok"; readonly result: unknown; readonly is_error: boolean }
  | { readonly _tag: "failed"; readonly cause: string }

/** Args the host cannot send: not sent to the owner, an error result the model can read (like any failed tool). */
export const refused = (reason: string): Finished<Outcome> => ({
  outcome: { result: `[withheld: ${reason}]`, is_error: true },
  notes: [notSentNote(reason)]
})

/** `failure` is how the exchange failed, when it did (the audit's error, else its status). */
export const finish = (answer: Answer<InvokeToolReply>, failure: string): Finished<Answered> => ({
  outcome:
    answer.reply !== undefined
      ? { _tag: "ok", result: answer.reply.result ?? null, is_error: answer.reply.is_error === true }
      : { _tag: "failed", cause: failure },
  notes: []
})
