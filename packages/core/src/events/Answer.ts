import type { OnFailure } from "@abhed/protocol"
import { Reducer } from "effect"
import type { Named } from "../Named.ts"
import { NameOrder } from "../Named.ts"
import { HostReasonName } from "../Decision.ts"
import type { Reason } from "../Verdict.ts"

/**
 * One extension's answer to one request, as an event's rule sees it: its reply, or why it failed and what its
 * `on_failure` makes of that. The host's exchange record is one as it is (no copy per reply on the hot path).
 */
export interface Answer<R> {
  readonly extension: { readonly name: string; readonly config: { readonly on_failure: OnFailure } }
  readonly reply: R | undefined
  /** "extension X unavailable: cause", when it failed. */
  readonly failure: string | undefined
}

/** What a failure counts as: the extension's `on_failure` when it failed, else "ignore" (no failure to count). */
export const onFailureOf = (answer: Answer<unknown>): OnFailure =>
  answer.failure !== undefined ? answer.extension.config.on_failure : "ignore"

/** The replies among the answers, named, in the answers' order (the failed ones have none). */
export const repliesOf = <R>(answers: ReadonlyArray<Answer<R>>): Array<Named<R>> => {
  const replies: Array<Named<R>> = []
  for (const a of answers) if (a.reply !== undefined) replies.push({ name: a.extension.name, value: a.reply })
  return replies
}

/** Merges two lists sorted by extension name into one (names are unique across a round's answers). */
const mergeByName = <A extends Answer<unknown>>(xs: ReadonlyArray<A>, ys: ReadonlyArray<A>): ReadonlyArray<A> => {
  if (xs.length === 0) return ys
  if (ys.length === 0) return xs
  const out: Array<A> = []
  let i = 0
  let j = 0
  while (i < xs.length && j < ys.length) {
    const x = xs[i]
    const y = ys[j]
    if (x === undefined || y === undefined) break
    if (NameOrder(x.extension.name, y.extension.name) <= 0) {
      out.push(x)
      i++
    } else {
      out.push(y)
      j++
    }
  }
  for (const x of xs.slice(i)) out.push(x)
  for (const y of ys.slice(j)) out.push(y)
  return out
}

/**
 * The answers of one round in name order: the reducer of the events whose rule reads every answer at once (the
 * outcome is a function of the name-ordered list, so it does not depend on who answered first). Its values are
 * lists sorted by name; the host's exchanges already are one (its audience is in name order), so it passes them
 * as they are instead of folding singletons.
 */
export const AnswersReducer = <A extends Answer<unknown>>(): Reducer.Reducer<ReadonlyArray<A>> =>
  Reducer.make<ReadonlyArray<A>>(mergeByName, [])

/** The host's own reason, for input it refused or withheld. */
export const hostReasons = (reason: string): ReadonlyArray<Reason> => [{ extension: HostReasonName, reason }]

/** The note on a dispatch whose input reached no extension. */
export const notSentNote = (reason: string): string => `not sent to any extension: ${reason}`

/** What one event's rule yields: the outcome, and the notes the audit records with it. */
export interface Finished<A> {
  readonly outcome: A
  readonly notes: ReadonlyArray<string>
}
