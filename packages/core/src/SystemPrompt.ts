import type { BeforeAgentStartReply } from "@abhed/protocol"
import type { Named } from "./Named.ts"
import { sortByName } from "./Named.ts"

/** Between the agent's system text and each appended text: a blank line. */
export const SystemSeparator = "\n\n"

/**
 * `before_agent_start` (docs/design.md#combination): appended texts in extension-name order, each after a blank line.
 * Returns the full resulting system text. Empty appended texts are skipped; with an empty system text there is no
 * leading separator. An extension can only append: it cannot remove or reorder what the agent wrote.
 */
export const combineSystem = (system: string, replies: ReadonlyArray<Named<BeforeAgentStartReply>>): string => {
  const parts = sortByName(replies).flatMap((r) =>
    r.value.system === undefined || r.value.system === "" ? [] : [r.value.system]
  )
  return (system === "" ? parts : [system, ...parts]).join(SystemSeparator)
}
