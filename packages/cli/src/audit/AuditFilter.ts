import type { AuditEntryRecord } from "./AuditEntry.ts"
import { toolCallOutcome } from "./AuditEntry.ts"

/**
 * Which records `abhed-ext audit` shows (pure). Each flag may be given more than once: a record matches a flag when
 * it matches any of its values, and the flags given all have to match.
 */
export interface AuditFilter {
  /** The records of these call ids (a tool_call and its tool_result share one). */
  readonly calls: ReadonlyArray<string>
  /** The records these extensions were asked about: replied, or failed to (not those they do not take). */
  readonly extensions: ReadonlyArray<string>
  /** The tool calls decided so (a record of another event has no decision, and is left out). */
  readonly decisions: ReadonlyArray<"allow" | "ask" | "deny">
}

/** Statuses of an extension that was not asked. */
const NotAsked: ReadonlySet<string> = new Set(["not_subscribed", "not_matched"])

const asked = (record: AuditEntryRecord, name: string): boolean =>
  record.rounds.some((round) => round.exchanges.some((x) => x.extension === name && !NotAsked.has(x.status)))

export const matches = (filter: AuditFilter, record: AuditEntryRecord): boolean => {
  if (filter.calls.length > 0 && (record.call_id === undefined || !filter.calls.includes(record.call_id))) return false
  if (filter.extensions.length > 0 && !filter.extensions.some((name) => asked(record, name))) return false
  if (filter.decisions.length > 0) {
    const decision = toolCallOutcome(record)?.decision
    if (decision === undefined || !filter.decisions.includes(decision)) return false
  }
  return true
}
