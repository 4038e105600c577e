import { isJsonObject } from "@abhed/protocol/Json"

/**
 * What stays home of a dispatch, as text a reason is compared with (TelemetryQuotes.ts): every string in it, and
 * each as a careless author may have quoted it: escaped (JSON, Python's json.dumps), an argv as its command line or
 * its JSON, short values with their keys. Bounded: past its budget, a dispatch's reasons stay home.
 */

/** The shortest run of a reason that counts as a quote of what stays home. */
export const QuoteMin = 10

/** The most text of one dispatch a reason is compared with; past it the reasons stay home. */
export const HomeTextMax = 256 * 1024

/**
 * What a dispatch's home texts may still take: `left` of what it holds (`HomeTextMax`; a text met twice, as the
 * args are in the record and in its outcome, counts once) and `derived` of the forms made of it (escaped, joined),
 * at most twice as much. Past either, nothing is compared and the reasons stay home (`left` below zero).
 */
export interface Budget {
  left: number
  derived: number
  readonly seen: Set<string>
}
export const budgetOf = (): Budget => ({ left: HomeTextMax, derived: 2 * HomeTextMax, seen: new Set() })

/** A form made of what the dispatch holds: counted apart, and past its share, too much to compare. */
const pushDerived = (text: string, out: Array<string>, budget: Budget): void => {
  if (budget.seen.has(text)) return
  budget.seen.add(text)
  out.push(text)
  budget.derived -= text.length
  if (budget.derived < 0) budget.left = -1
}

/**
 * `text` as a careless author may have quoted it: as it is, JSON-escaped (`\"`, `\n`: a reason made of the args' JSON
 * text) and, when it holds non-ASCII, escaped as Python's `json.dumps` does (`\u00e9`).
 */
const pushForms = (text: string, out: Array<string>, budget: Budget): void => {
  if (budget.seen.has(text)) return
  budget.seen.add(text)
  out.push(text)
  budget.left -= text.length
  if (budget.left < 0) return
  const escaped = JSON.stringify(text).slice(1, -1)
  if (escaped !== text) pushDerived(escaped, out, budget)
  const ascii = escaped.replace(NonAscii, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
  if (ascii !== escaped) pushDerived(ascii, out, budget)
}
const NonAscii = /[\u0080-\uffff]/g

/** Every string in `value` of at least `QuoteMin` chars (values, not keys), skipping the keys `skip` names. */
export const stringsIn = (value: unknown, out: Array<string>, budget: Budget, skip?: ReadonlySet<string>): void => {
  if (budget.left < 0) return
  if (typeof value === "string") {
    if (value.length >= QuoteMin) pushForms(value, out, budget)
    return
  }
  if (Array.isArray(value)) {
    for (const item of value) stringsIn(item, out, budget)
    // An argv quoted as the command line it makes (`git push --force origin main`) or as JSON: no short item alone
    // is a quote.
    if (value.length > 1 && value.every(isScalar) && value.some(isShort)) {
      joined(value.join(" "), out, budget)
      jsonJoined(
        value.map((item) => JSON.stringify(item)),
        out,
        budget
      )
      plain(value.map(pythonRepr).join(", "), out, budget)
    }
    return
  }
  if (!isJsonObject(value)) return
  let short = 0
  for (const key in value) {
    if (skip?.has(key) === true) continue
    if (isShort(value[key])) short++
    stringsIn(value[key], out, budget)
  }
  // Short values quoted with their keys (`path=/etc/x mode=rw`, or the JSON text of the object), as a careless
  // reason lists what it read.
  if (short > 1) {
    const pairs: Array<string> = []
    const json: Array<string> = []
    const python: Array<string> = []
    for (const key in value)
      if (skip?.has(key) !== true && isShort(value[key])) {
        pairs.push(`${key}=${String(value[key])}`)
        json.push(`${JSON.stringify(key)}:${JSON.stringify(value[key])}`)
        python.push(`${pythonRepr(key)}: ${pythonRepr(value[key])}`)
      }
    joined(pairs.join(" "), out, budget)
    jsonJoined(json, out, budget)
    plain(python.join(", "), out, budget)
  }
}

/** A value as Python prints it in a list or dict (`f"blocked: {args}"`): `'rw'`, `3`, `True`. */
const pythonRepr = (value: unknown): string =>
  typeof value === "string"
    ? value.includes("'") || value.includes("\\")
      ? JSON.stringify(value)
      : `'${value}'`
    : value === true
      ? "True"
      : value === false
        ? "False"
        : String(value)

/** A text made of several values as it is, when it is long enough to be quoted. */
const plain = (text: string, out: Array<string>, budget: Budget): void => {
  if (budget.left >= 0 && text.length >= QuoteMin) pushDerived(text, out, budget)
}

/** JSON items as `JSON.stringify` joins them, and as Python's `json.dumps` does (`", "`, `": "`). */
const jsonJoined = (items: ReadonlyArray<string>, out: Array<string>, budget: Budget): void => {
  const compact = items.join(",")
  if (budget.left < 0 || compact.length < QuoteMin) return
  pushDerived(compact, out, budget)
  pushDerived(items.map((item) => item.replace(KeyColon, '$1": ')).join(", "), out, budget)
}
// A key's colon, right after its closing quote (the key is first in an item: its own quotes are escaped).
const KeyColon = /^("(?:[^"\\]|\\.)*)":/

const isScalar = (value: unknown): value is string | number | boolean =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"
/** A value too short to count as a quote on its own. */
const isShort = (value: unknown): boolean =>
  typeof value === "string" ? value.length < QuoteMin : typeof value === "number" || typeof value === "boolean"

/** A text made of several values, when it is long enough to be quoted. */
const joined = (text: string, out: Array<string>, budget: Budget): void => {
  if (budget.left < 0 || text.length < QuoteMin) return
  pushDerived(text, out, budget)
  const escaped = JSON.stringify(text).slice(1, -1)
  if (escaped !== text) pushDerived(escaped, out, budget)
}
