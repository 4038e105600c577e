import { isJsonObject, jsonEquals } from "@abhed/protocol"
import type { Style } from "../Style.ts"

/**
 * A record's rounds as rows (pure), as the demo and `abhed-ext audit` lay them out: each round's subscribed
 * extensions, one row each, then the notes. The demo reads the host's records, `audit` the lines of a file: each
 * says how one exchange is written, this says where the rows go and what each round sent.
 */

/** What a round needs of an exchange: who, how it went, and what it replied. */
export interface RoundExchange {
  readonly extension: string
  readonly status: string
  readonly reply?: unknown
}

export interface RoundsOf<X extends RoundExchange> {
  readonly event: string
  readonly rounds: ReadonlyArray<{ readonly round: number; readonly exchanges: ReadonlyArray<X> }>
  readonly notes: ReadonlyArray<string>
}

/** The field a reply proposes a rewrite in, for the events that settle (the payload each round sends). */
const proposalField = (event: string): "args" | "content" | undefined =>
  event === "tool_call" ? "args" : event === "tool_result" ? "content" : undefined

/**
 * What the next round sends: the proposal of the lowest-named extension that proposed something other than what
 * this round sent (the settling rule; exchanges are in name order), else the same.
 */
const nextPayload = (event: string, exchanges: ReadonlyArray<RoundExchange>, current: unknown): unknown => {
  const field = proposalField(event)
  if (field === undefined || current === undefined) return current
  for (const x of exchanges) {
    const proposed = x.status === "replied" && isJsonObject(x.reply) ? x.reply[field] : undefined
    if (proposed !== undefined && !jsonEquals(proposed, current)) return proposed
  }
  return current
}

/**
 * The rows of `record`'s rounds: `row` writes one exchange, given the width of the names column and what its round
 * sent (`first` for round 1, undefined for the events that do not settle). `shown` writes a name or a note taken
 * from the record (`audit` escapes what a file holds).
 */
export const roundRows = <X extends RoundExchange>(
  record: RoundsOf<X>,
  first: unknown,
  s: Style,
  row: (x: X, width: number, current: unknown) => string,
  shown: (text: string) => string = (text) => text
): Array<string> => {
  const rows: Array<string> = []
  const asked = new Set<string>()
  for (const round of record.rounds)
    for (const x of round.exchanges) if (x.status !== "not_subscribed") asked.add(x.extension)
  const width = Math.max(8, ...[...asked].map((name) => shown(name).length))
  let current = first
  for (const round of record.rounds) {
    if (record.rounds.length > 1) rows.push(s.dim(`  round ${round.round}`))
    for (const x of round.exchanges) if (x.status !== "not_subscribed") rows.push(row(x, width, current))
    current = nextPayload(record.event, round.exchanges, current)
  }
  if (asked.size === 0) rows.push(s.dim("    (no extension subscribes to this event)"))
  for (const note of record.notes) rows.push(s.dim(`    note: ${shown(note)}`))
  return rows
}

/** A decision's colour: deny red, ask yellow, allow green. */
export const decisionColour = (d: string, s: Style) => (d === "deny" ? s.red : d === "ask" ? s.yellow : s.green)
