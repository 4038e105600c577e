import { isJsonObject } from "@abhed/protocol/Json"
import type { AuditRecord } from "./AuditRecord.ts"
import { budgetOf, HomeTextMax, QuoteMin, stringsIn } from "./TelemetryQuoteForms.ts"

export { HomeTextMax, QuoteMin }

/**
 * An extension's reason leaves the host as its own words (docs/observability.md), but those words may quote what
 * stays home: a guard's "blocked: `git push --force origin main`" holds the args, a hook's "removed AKIA…" the
 * secret it took out of a result. Before a reason is exported, every run of at least `QuoteMin` characters it shares
 * with what stays home is cut out (`[…]`): the args (unless the operator exports them, `args: "full"`), what came in,
 * the outcome's content and what the extensions proposed in its place, each as a careless author may have written
 * it (TelemetryQuoteForms.ts). Shorter overlaps are kept: they are as likely chance (`is not`) as a quote. Work done
 * when a batch is written, never on a dispatch's path: one pass over the texts for all the reasons of a dispatch,
 * bounded by `HomeTextMax`; past it, a dispatch's reasons are not exported at all (the decision and who made it
 * still are).
 */

/** What the reasons of one dispatch are compared with, or `undefined` when it is too much to compare (past `HomeTextMax`). */
export type HomeTexts = ReadonlyArray<string> | undefined

// The outcome's own reasons are what is scrubbed, not what it is scrubbed of.
const OutcomeReasons: ReadonlySet<string> = new Set(["reasons", "withheld"])
// A reply's reason likewise; everything else in a reply is a proposal (args, content, a summary, a system prompt).
const ReplyReason: ReadonlySet<string> = new Set(["reason"])

// Per record and mode, once asked for (an exporter asks for one mode): `{ texts }`, as texts may be `undefined`.
const known = new WeakMap<
  AuditRecord,
  { digest?: { readonly texts: HomeTexts }; full?: { readonly texts: HomeTexts } }
>()

/** What of `record` stays home, as text (made once per record and mode). */
export const homeTexts = (record: AuditRecord, args: "digest" | "full"): HomeTexts => {
  let cached = known.get(record)
  if (cached === undefined) {
    cached = {}
    known.set(record, cached)
  }
  const made = cached[args]
  if (made !== undefined) return made.texts
  const out: Array<string> = []
  const budget = budgetOf()
  if (args === "digest") stringsIn(record.args, out, budget)
  stringsIn(record.input, out, budget)
  stringsIn(record.outcome, out, budget, OutcomeReasons)
  for (const round of record.rounds)
    for (const x of round.exchanges) if (x.reply !== undefined) stringsIn(x.reply, out, budget, ReplyReason)
  const texts = budget.left < 0 ? undefined : out
  cached[args] = { texts }
  unquoteAll(reasonsOf(record), texts)
  return texts
}

/**
 * The most of a reason compared with what stays home: enough that what is left after the cuts still fills the 256
 * characters that leave, and a reason of megabytes (16 MiB fits in a reply) costs no more than this.
 */
export const ScrubMax = 1024

/** Every reason of `record` (its replies' and its outcome's), as far as they are compared. */
const reasonsOf = (record: AuditRecord): Array<string> => {
  const out: Array<string> = []
  const add = (reason: unknown) => {
    if (typeof reason === "string") out.push(reason.length > ScrubMax ? reason.slice(0, ScrubMax) : reason)
  }
  for (const round of record.rounds) for (const x of round.exchanges) if (isJsonObject(x.reply)) add(x.reply["reason"])
  if (isJsonObject(record.outcome))
    for (const key of OutcomeReasons) {
      const named = record.outcome[key]
      if (Array.isArray(named)) for (const r of named) if (isJsonObject(r)) add(r["reason"])
    }
  return out
}

/**
 * What of one request and its reply stays home (the hook adapter's runs, which have no record): every string of the
 * request, and of the reply but its reason, and `also` (what else the hook read: its working folder, its environment's values).
 */
export const requestTexts = (request: unknown, reply: unknown, also: ReadonlyArray<string> = []): HomeTexts => {
  const out: Array<string> = []
  const budget = budgetOf()
  stringsIn(request, out, budget)
  stringsIn(reply, out, budget, ReplyReason)
  // Each alone: they are not one list the hook read (an argv), but the values it read.
  for (const text of also) stringsIn(text, out, budget)
  return budget.left < 0 ? undefined : out
}

/** A polynomial hash of `QuoteMin` chars, rolled one char at a time (Rabin–Karp), in 32 bits. */
const Base = 257
const BaseHigh = (() => {
  let p = 1
  for (let i = 1; i < QuoteMin; i++) p = Math.imul(p, Base) | 0
  return p
})()
const hashAt = (text: string, at: number): number => {
  let h = 0
  for (let i = at; i < at + QuoteMin; i++) h = (Math.imul(h, Base) + text.charCodeAt(i)) | 0
  return h
}

// A hash as a map key within a small integer (a key past 2^30 is a boxed number, slower to look up), and a filter
// of the reason's hashes that most places of a text miss without a map lookup (cleared after each reason).
const SmiMask = 0x3fffffff
const FilterMask = 0xffff
const filter = new Uint8Array(FilterMask + 1)

interface Window {
  readonly text: string
  /** Where it is: pairs of a reason's index and a place in it. */
  readonly at: Array<number>
  found: boolean
}

/**
 * `reason` with every run it shares with one of `texts` (at least `QuoteMin` chars) replaced by `[…]`; `undefined`
 * when `texts` is (too much home text to compare: the reason stays home).
 */
export const unquoted = (reason: string, texts: HomeTexts): string | undefined => {
  if (texts === undefined) return undefined
  if (reason.length < QuoteMin || texts.length === 0) return reason
  // One reason leaves up to three times (its exchange's span, the log record's exchange and its reasons): cut once.
  const known = cuts.get(texts)?.get(reason)
  if (known !== undefined) return known
  unquoteAll([reason], texts)
  return cuts.get(texts)?.get(reason) ?? cutQuotes([reason], texts)[0]
}
const cuts = new WeakMap<ReadonlyArray<string>, Map<string, string>>()

/**
 * Cuts every one of `reasons` at once, for `unquoted` to find: one pass over `texts` for all the reasons of a
 * dispatch, not one per reason.
 */
export const unquoteAll = (reasons: ReadonlyArray<string>, texts: HomeTexts): void => {
  if (texts === undefined || texts.length === 0) return
  let done = cuts.get(texts)
  if (done === undefined) {
    done = new Map()
    cuts.set(texts, done)
  }
  const todo = [...new Set(reasons.filter((r) => r.length >= QuoteMin && done.get(r) === undefined))]
  if (todo.length === 0) return
  const cut = cutQuotes(todo, texts)
  for (let i = 0; i < todo.length; i++) done.set(todo[i] as string, cut[i] as string)
}

const cutQuotes = (reasons: ReadonlyArray<string>, texts: ReadonlyArray<string>): Array<string> => {
  // The reasons' distinct windows by hash; each text is rolled through once and every window it holds is marked.
  // Distinct: a window that recurs (indentation, a rule of dashes) is compared once per place in a text, not once
  // per place in the reason too, which made a reason quoting indented code quadratic.
  const windows = new Map<number, Array<Window>>()
  const byText = new Map<string, Window>()
  for (let r = 0; r < reasons.length; r++) {
    const reason = reasons[r] as string
    for (let p = 0; p + QuoteMin <= reason.length; p++) {
      const key = reason.slice(p, p + QuoteMin)
      const known = byText.get(key)
      if (known !== undefined) {
        known.at.push(r, p)
        continue
      }
      const window: Window = { text: key, at: [r, p], found: false }
      byText.set(key, window)
      const h = hashAt(reason, p) & SmiMask
      const same = windows.get(h)
      if (same === undefined) windows.set(h, [window])
      else same.push(window)
      filter[h & FilterMask] = 1
    }
  }
  let left = byText.size
  for (const text of texts) {
    if (left === 0) break
    if (text.length < QuoteMin) continue
    let h = hashAt(text, 0)
    for (let i = 0; ; i++) {
      const same = filter[h & FilterMask] === 1 ? windows.get(h & SmiMask) : undefined
      if (same !== undefined)
        for (const w of same)
          if (!w.found && text.startsWith(w.text, i)) {
            w.found = true
            left--
          }
      if (i + QuoteMin >= text.length || left === 0) break
      h = (Math.imul((h - Math.imul(text.charCodeAt(i), BaseHigh)) | 0, Base) + text.charCodeAt(i + QuoteMin)) | 0
    }
  }
  for (const h of windows.keys()) filter[h & FilterMask] = 0
  if (left === byText.size) return [...reasons]
  const quoted = reasons.map((reason) => new Uint8Array(reason.length))
  for (const w of byText.values())
    if (w.found)
      for (let k = 0; k < w.at.length; k += 2) {
        const p = w.at[k + 1] as number
        quoted[w.at[k] as number]?.fill(1, p, p + QuoteMin)
      }
  return reasons.map((reason, r) => {
    const marks = quoted[r] as Uint8Array
    let out = ""
    for (let i = 0; i < reason.length; i++) {
      if (marks[i] === 0) out += reason[i]
      else if (i === 0 || marks[i - 1] === 0) out += "[…]"
    }
    return out
  })
}
