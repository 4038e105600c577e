import type { ToolCallReply } from "@abhed/protocol"
import { Order, Reducer } from "effect"
import { NameOrder } from "./Named.ts"

/**
 * The `tool_call` verdict lattice (docs/design.md#combination): none < ask < deny, join = max.
 * There is no "allow" level: an extension can only make a call stricter (veto, never permit).
 */
export type Level = "none" | "ask" | "deny"

export interface Reason {
  readonly extension: string
  readonly reason: string
}

/** Reasons as one line, as the agent, the CLI and errors show them: `guard: no rm -rf; other: why`. */
export const formatReasons = (reasons: ReadonlyArray<Reason>): string =>
  reasons.map((r) => `${r.extension}: ${r.reason}`).join("; ")

export interface Verdict {
  readonly level: Level
  /** The reasons of the extensions at `level`, sorted by extension name then reason, without duplicates. */
  readonly reasons: ReadonlyArray<Reason>
}

const rank: { readonly [L in Level]: number } = { none: 0, ask: 1, deny: 2 }

/** none < ask < deny. */
export const LevelOrder: Order.Order<Level> = Order.mapInput(Order.Number, (l: Level) => rank[l])

/** Reasons ordered by extension name, then by reason text (code units, not locale). */
export const ReasonOrder: Order.Order<Reason> = Order.combine(
  Order.mapInput(NameOrder, (r: Reason) => r.extension),
  Order.mapInput(Order.String, (r: Reason) => r.reason)
)

export const none: Verdict = { level: "none", reasons: [] }

export const ask = (extension: string, reason: string): Verdict => ({ level: "ask", reasons: [{ extension, reason }] })

export const deny = (extension: string, reason: string): Verdict => ({
  level: "deny",
  reasons: [{ extension, reason }]
})

/** Sorted, duplicates removed: the normal form that makes `join` commutative and idempotent as deep equality. */
export const normalizeReasons = (reasons: ReadonlyArray<Reason>): ReadonlyArray<Reason> => {
  // None or one: already in normal form (and every dispatch joins several `none`s: no copy for them).
  if (reasons.length < 2) return reasons
  const sorted = [...reasons].sort(ReasonOrder)
  return sorted.filter((r, i) => {
    const prev = i === 0 ? undefined : sorted[i - 1]
    return prev === undefined || ReasonOrder(prev, r) !== 0
  })
}

/** Max level; the reasons of the winning level (both sides' when the levels are equal). */
export const join = (a: Verdict, b: Verdict): Verdict => {
  const c = LevelOrder(a.level, b.level)
  if (c > 0) return { level: a.level, reasons: normalizeReasons(a.reasons) }
  if (c < 0) return { level: b.level, reasons: normalizeReasons(b.reasons) }
  const both = a.reasons.length === 0 ? b.reasons : b.reasons.length === 0 ? a.reasons : [...a.reasons, ...b.reasons]
  return { level: a.level, reasons: normalizeReasons(both) }
}

/** A commutative monoid: replies can be folded in as they arrive, in any order. */
export const VerdictReducer: Reducer.Reducer<Verdict> = Reducer.make(join, none)

/**
 * One extension's `tool_call` reply as a verdict. `block` and `ask` both set → deny. `reason` only counts with
 * `block` or `ask`; an absent or empty reason gets a default naming the extension. `args` (a rewrite) is not a
 * verdict: it goes through settling.
 */
export const fromToolCallReply = (extension: string, reply: ToolCallReply): Verdict => {
  const given = reply.reason !== undefined && reply.reason !== "" ? reply.reason : undefined
  if (reply.block === true) return deny(extension, given ?? `blocked by ${extension}`)
  if (reply.ask === true) return ask(extension, given ?? `approval requested by ${extension}`)
  return none
}
