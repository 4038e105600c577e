import type { ContextReply } from "@abhed/protocol"
import type { Named } from "./Named.ts"
import { sortByName } from "./Named.ts"

/** Elements of one extension's `keep` that name no message: negative, too large, not an integer, not a number. */
export interface OutOfRange {
  readonly extension: string
  /** Unique; numbers ascending first, then the other values in the order sent. */
  readonly indices: ReadonlyArray<unknown>
}

export interface KeepOutcome {
  /** Indices of the messages that go upstream: ascending, unique. */
  readonly keep: ReadonlyArray<number>
  /** Sorted by extension name; only extensions that sent at least one such index. */
  readonly outOfRange: ReadonlyArray<OutOfRange>
}

/**
 * `context` keep (docs/design.md#combination): the intersection of the kept index sets, so a message goes upstream only
 * if no extension dropped it. A reply without `keep` keeps everything. Elements that name no message are ignored (they
 * cannot keep anything else, and the rest of the list counts) and reported for the audit log.
 */
export const combineKeep = (messageCount: number, replies: ReadonlyArray<Named<ContextReply>>): KeepOutcome => {
  const n = Math.max(0, Math.floor(messageCount))
  // votes[i] = how many keep-lists contain i (each list counted once per index, duplicates collapsed).
  const votes = new Uint32Array(n)
  const seen = new Uint32Array(n) // seen[i] = 1 + position of the last list that voted for i
  let lists = 0
  const outOfRange: Array<OutOfRange> = []
  for (const { name, value } of sortByName(replies)) {
    if (value.keep === undefined) continue
    lists++
    const badNumbers = new Set<number>()
    const badOthers = new Set<unknown>()
    for (const i of value.keep) {
      if (typeof i === "number" && Number.isInteger(i) && i >= 0 && i < n) {
        if (seen[i] !== lists) {
          seen[i] = lists
          votes[i] = (votes[i] ?? 0) + 1
        }
      } else if (typeof i === "number") {
        badNumbers.add(i)
      } else {
        badOthers.add(i)
      }
    }
    if (badNumbers.size + badOthers.size > 0) {
      outOfRange.push({ extension: name, indices: [...[...badNumbers].sort((a, b) => a - b), ...badOthers] })
    }
  }
  const keep: Array<number> = []
  for (let i = 0; i < n; i++) if (votes[i] === lists) keep.push(i)
  return { keep, outOfRange }
}
