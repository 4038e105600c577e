import type { BeforeCompactReply } from "@abhed/protocol"
import type { Named } from "./Named.ts"
import { sortByName } from "./Named.ts"

export interface CompactOutcome {
  readonly cancel: boolean
  /** Names of the extensions that cancelled, sorted. */
  readonly cancelledBy: ReadonlyArray<string>
  /** The summary to use; null = the agent summarizes itself (also null when cancelled). */
  readonly summary: string | null
}

/**
 * `before_compact` (docs/design.md#combination): any `cancel` wins (keeping history is the conservative choice);
 * otherwise the supplied summaries joined in name order with a blank line; no (non-empty) summary → null, the agent's
 * own.
 */
export const combineCompact = (replies: ReadonlyArray<Named<BeforeCompactReply>>): CompactOutcome => {
  const sorted = sortByName(replies)
  const cancelledBy = sorted.filter((r) => r.value.cancel === true).map((r) => r.name)
  if (cancelledBy.length > 0) return { cancel: true, cancelledBy, summary: null }
  const summaries = sorted.flatMap((r) =>
    r.value.summary === undefined || r.value.summary === "" ? [] : [r.value.summary]
  )
  return { cancel: false, cancelledBy: [], summary: summaries.length === 0 ? null : summaries.join("\n\n") }
}
