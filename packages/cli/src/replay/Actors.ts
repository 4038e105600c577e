import { isJsonObject } from "@abhed/protocol"
import type { RoundExchange, RoundsOf } from "../demo/RoundRows.ts"
import { excerpt } from "../Excerpts.ts"

/**
 * Who did something to a tool result or a context, read from the dispatch's audit record (a tool call's outcome
 * names them itself: its reasons and `rewrittenBy`). Pure.
 */

/**
 * A tool result that reads as withheld: `[withheld: why]`, with is_error. A tool may return such text itself, so
 * it is the host's only when it is not what came in (ReplayCompare.ts); a record without its input that reads so
 * is not replayable (ReplayPlan.ts).
 */
export const isWithheld = (outcome: { readonly content: unknown; readonly is_error: unknown }): boolean =>
  outcome.is_error === true && typeof outcome.content === "string" && outcome.content.startsWith("[withheld: ")

/** An exchange that ended without a reply the host could use. */
export const failedStatus = (x: RoundExchange): boolean =>
  x.status !== "replied" && x.status !== "not_subscribed" && x.status !== "not_matched"

type FailedIn = {
  readonly rounds: ReadonlyArray<{
    readonly exchanges: ReadonlyArray<RoundExchange & { readonly error?: string | undefined }>
  }>
}

/** The failed exchanges of a dispatch, in round and name order. */
const failedOnes = (record: FailedIn | undefined) =>
  (record?.rounds ?? []).flatMap((round) => round.exchanges.filter(failedStatus))

/** The names of the extensions that failed in a dispatch. Unique. */
export const failedExtensions = (record: FailedIn | undefined): ReadonlyArray<string> => [
  ...new Set(failedOnes(record).map((x) => x.extension))
]

/**
 * The extensions that failed in a dispatch, each as `name did not answer (why)`: their `on_failure` answered for them,
 * so what came of it is not their judgement. Unique, in round and name order.
 */
export const failuresOf = (
  record: FailedIn | undefined,
  // A failure the reader expected (`test`'s `failing`) is left out.
  except: ReadonlyArray<string> = []
): ReadonlyArray<string> => {
  const failed = failedOnes(record)
    .filter((x) => !except.includes(x.extension))
    .map((x) => {
      const why = x.error === undefined ? x.status : x.error.startsWith(x.status) ? x.error : `${x.status}: ${x.error}`
      return `${x.extension} did not answer (${excerpt(why, 200)})`
    })
  return [...new Set(failed)]
}

const replyField = (x: RoundExchange, field: string): unknown => (isJsonObject(x.reply) ? x.reply[field] : undefined)

/**
 * A tool result's actors: whoever proposed a content other than the one its round was sent (the settling rule:
 * a proposal equal to the current content is none), whoever raised is_error, and, when the content was withheld,
 * whoever failed. The rounds are replayed from `input`, the content the first round was sent; each next round's
 * content is the lowest-named differing proposal, as the host adopts it. Sorted, unique.
 */
export const resultActors = (
  record: Pick<RoundsOf<RoundExchange>, "rounds">,
  input: string,
  withheld: boolean
): ReadonlyArray<string> => {
  const names = new Set<string>()
  let current = input
  for (const round of record.rounds) {
    let adopted: string | undefined
    for (const x of round.exchanges) {
      const content = replyField(x, "content")
      if (typeof content === "string" && content !== current) {
        names.add(x.extension)
        adopted ??= content
      }
      if (replyField(x, "is_error") === true) names.add(x.extension)
      if (withheld && failedStatus(x)) names.add(x.extension)
    }
    if (adopted !== undefined) current = adopted
  }
  return [...names].sort()
}

/** A context's actors: whoever sent a `keep`, and, when the context was withheld, whoever failed. Sorted, unique. */
export const contextActors = (
  record: Pick<RoundsOf<RoundExchange>, "rounds">,
  withheld: boolean
): ReadonlyArray<string> => {
  const names = new Set<string>()
  for (const round of record.rounds) {
    for (const x of round.exchanges) {
      const keep = replyField(x, "keep")
      if (keep !== undefined && keep !== null) names.add(x.extension)
      if (withheld && failedStatus(x)) names.add(x.extension)
    }
  }
  return [...names].sort()
}
