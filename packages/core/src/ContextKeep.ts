import type { ContextReply } from "@abhed/protocol"
import type { Named } from "./Named.ts"
import { sortByName } from "./Named.ts"

/** Indices one extension asked to keep that do not name a message (negative, too large, or not an integer). */
export interface OutOfRange {
  readonly extension: string
  /** Ascending, unique. */
  readonly indices: ReadonlyArray<number>
}

export interface KeepOutcome {
  /** Indices of the messages that go upstream: ascending, unique. */
  readonly keep: ReadonlyArray<number>
  /** Sorted by extension name; only extensions that sent at least one such index. */
  readonly outOfRange: ReadonlyArray<OutOfRange>
}

/**
 * `context` keep (DESIGN §3): the intersection of the kept index sets, so a message goes upstream only if no
 * extension dropped it. A reply without `keep` keeps everything. Indices that name no message are ignored
 * (they cannot drop anything else) and reported for the audit log.
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
    const bad = new Set<number>()
    for (const i of value.keep) {
      if (Number.isInteger(i) && i >= 0 && i < n) {
        if (seen[i] !== lists) {
          seen[i] = lists
          votes[i] = (votes[i] ?? 0) + 1
        }
      } else {
        bad.add(i)
      }
    }
    if (bad.size > 0) outOfRange.push({ extension: name, indices: [...bad].sort((a, b) => a - b) })
  }
  const keep: Array<number> = []
  for (let i = 0; i < n; i++) if (votes[i] === lists) keep.push(i)
  return { keep, outOfRange }
}
