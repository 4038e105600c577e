import type { AuditEntry, AuditEntryRecord, BadLine } from "./AuditEntry.ts"
import type { ExtensionStats, Death, Vetoes, Rows, ReportData } from "./ReportShape.ts"

export type { ExtensionStats, Death, Vetoes, Rows, ReportData }

/**
 * What the HTML report draws, computed here rather than in the browser (pure): a page that had to parse and
 * aggregate 100k records took tens of seconds to draw. The builder takes the records one by one as they are read
 * (holding their lines, not the decoded records), and `finish` gives the aggregates (counts, the verdicts over time,
 * latency per extension with its timeline as pixels, deaths, vetoes) and one compact row per record (its strings
 * interned: sessions, events, tools and reasons repeat) for the list and its search. The page parses a record itself
 * only when its drill-down is opened.
 */

/** The decision timeline's slices, and the size of each latency timeline (pixels). */
export const Slices = 100
export const TimelineWidth = 420
export const TimelineHeight = 34
/** A timeline point above p99 × 1.5 is drawn at the top, in red: this is its y in a point's code. */
const Over = 63

const Lifecycle = new Set(["session_start", "list_tools", "session_end"])
const Healthy = new Set(["replied", "not_subscribed", "not_matched"])
const Decisions = ["", "allow", "ask", "deny"] as const
type Decision = "allow" | "ask" | "deny"

interface Extension {
  readonly latency: Array<number>
  readonly at: Array<number>
  failures: number
  allows: number
}

const isObj = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const str = (u: unknown): string => (typeof u === "string" ? u : "")
const num = (u: unknown): number => (typeof u === "number" && Number.isFinite(u) ? u : 0)
const arr = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])

const quantile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0)

/** The decision of a tool call's outcome, read leniently: an odd outcome still counts as "other". */
const decisionOf = (record: AuditEntryRecord): Decision | undefined => {
  const o = record.outcome
  if (record.event !== "tool_call" || !isObj(o)) return undefined
  const d = o["decision"]
  return d === "allow" || d === "ask" || d === "deny" ? d : undefined
}

export const reportBuilder = (files: ReadonlyArray<string>) => {
  const fileIndex = new Map(files.map((file, i) => [file, i]))
  const strings: Array<string> = []
  const interned = new Map<string, number>()
  const intern = (s: string): number => {
    let i = interned.get(s)
    if (i === undefined) {
      i = strings.length
      strings.push(s)
      interned.set(s, i)
    }
    return i
  }
  const askedSets: Array<ReadonlyArray<number>> = []
  const askedIndex = new Map<string, number>()
  const rows: Rows = {
    file: [],
    line: [],
    time: [],
    session: [],
    call: [],
    event: [],
    tool: [],
    args: [],
    decision: [],
    reasons: [],
    took: [],
    asked: []
  }
  const times: Array<number> = []
  const extensions = new Map<string, Extension>()
  const deaths: Array<Death> = []
  const deathSeen = new Set<string>()
  const vetoes = new Map<string, Vetoes>()
  const counts = { allow: 0, ask: 0, deny: 0, other: 0 }
  let tmin = Infinity
  let tmax = -Infinity
  const extension = (name: string): Extension => {
    let e = extensions.get(name)
    if (e === undefined) {
      e = { latency: [], at: [], failures: 0, allows: 0 }
      extensions.set(name, e)
    }
    return e
  }
  const veto = (name: string): Vetoes => {
    let v = vetoes.get(name)
    if (v === undefined) {
      v = { name, deny: [], ask: [], rewrote: [] }
      vetoes.set(name, v)
    }
    return v
  }

  const add = (entry: Pick<AuditEntry, "file" | "line" | "record">): void => {
    const i = rows.time.length
    const r = entry.record
    const file = fileIndex.get(entry.file) ?? 0
    const t = Date.parse(r.time)
    times.push(t)
    if (Number.isFinite(t)) {
      if (t < tmin) tmin = t
      if (t > tmax) tmax = t
    }
    const decision = decisionOf(r)
    if (decision !== undefined) counts[decision]++
    else counts.other++
    const asked: Array<number> = []
    for (const round of r.rounds) {
      for (const x of round.exchanges) {
        const status = x.status
        if (status === "not_subscribed") continue
        const e = extension(x.extension)
        if (status !== "not_matched") {
          const name = intern(x.extension)
          if (!asked.includes(name)) asked.push(name)
        }
        if (status === "replied") {
          if (!Lifecycle.has(r.event)) {
            e.latency.push(num(x.latency_ms))
            e.at.push(t)
          }
          const reply = x.reply
          if (
            r.event === "tool_call" &&
            isObj(reply) &&
            typeof reply["reason"] === "string" &&
            reply["reason"] !== "" &&
            reply["block"] !== true &&
            reply["ask"] !== true
          )
            e.allows++
        } else if (!Healthy.has(status)) {
          e.failures++
          // A reply that says it could not answer is a failure, not a death (the extension lived on): listed as
          // its death, it would also hide the death that may come after it.
          if (status === "failed") continue
          const key = `${file}\u0000${r.session_id}\u0000${x.extension}`
          if (!deathSeen.has(key)) {
            deathSeen.add(key)
            deaths.push({ extension: x.extension, record: i, status, error: x.error ?? "", stderr: x.stderr })
          }
        }
      }
    }
    let reasons = ""
    if (decision !== undefined && isObj(r.outcome)) {
      const o = r.outcome
      reasons = arr(o["reasons"])
        .map((x) => (isObj(x) ? `${str(x["extension"])}: ${str(x["reason"])}` : ""))
        .join("; ")
      if (decision !== "allow") {
        for (const reason of arr(o["reasons"])) if (isObj(reason)) veto(str(reason["extension"]))[decision].push(i)
      }
      for (const name of arr(o["rewrittenBy"])) veto(str(name)).rewrote.push(i)
    }
    const askedKey = asked.join(",")
    let askedAt = askedIndex.get(askedKey)
    if (askedAt === undefined) {
      askedAt = askedSets.length
      askedSets.push(asked)
      askedIndex.set(askedKey, askedAt)
    }
    rows.file.push(file)
    rows.line.push(entry.line)
    rows.time.push(intern(r.time))
    rows.session.push(intern(r.session_id))
    rows.call.push(r.call_id === undefined ? -1 : intern(r.call_id))
    rows.event.push(intern(r.event))
    rows.tool.push(r.tool === undefined ? -1 : intern(r.tool))
    rows.args.push(r.args === undefined ? -1 : intern(JSON.stringify(r.args)))
    rows.decision.push(decision === undefined ? 0 : Decisions.indexOf(decision))
    rows.reasons.push(intern(reasons))
    rows.took.push(num(r.duration_ms))
    rows.asked.push(askedAt)
  }

  const finish = (bad: ReadonlyArray<BadLine>): ReportData => {
    const known = Number.isFinite(tmin)
    const span = Math.max(1, tmax - tmin)
    const slices = {
      allow: new Array<number>(Slices).fill(0),
      ask: new Array<number>(Slices).fill(0),
      deny: new Array<number>(Slices).fill(0)
    }
    for (let i = 0; i < times.length; i++) {
      const d = Decisions[rows.decision[i] ?? 0]
      const t = times[i] ?? NaN
      if (d === undefined || d === "" || !Number.isFinite(t)) continue
      const slice = Math.min(Slices - 1, Math.floor(((t - tmin) / span) * Slices))
      slices[d][slice] = (slices[d][slice] ?? 0) + 1
    }
    const stats = Array.from(extensions.keys())
      .sort()
      .map((name): ExtensionStats => {
        const e = extension(name)
        const sorted = Float64Array.from(e.latency).sort()
        const cap = Math.max(1, quantile(sorted, 0.99) * 1.5)
        const points = new Set<number>()
        for (let i = 0; i < e.latency.length; i++) {
          const latency = e.latency[i] ?? 0
          const at = e.at[i] ?? NaN
          const x = Number.isFinite(at) ? Math.round(((at - tmin) / span) * (TimelineWidth - 2)) : 0
          const y = latency > cap ? Over : Math.round(TimelineHeight - 2 - (latency / cap) * (TimelineHeight - 4))
          points.add(x * 64 + y)
        }
        return {
          name,
          replies: sorted.length,
          p50: quantile(sorted, 0.5),
          p99: quantile(sorted, 0.99),
          max: sorted.length > 0 ? (sorted[sorted.length - 1] ?? 0) : 0,
          failures: e.failures,
          allows: e.allows,
          points: Array.from(points).sort((a, b) => a - b)
        }
      })
    return {
      files,
      bad,
      n: times.length,
      counts,
      tmin: known ? tmin : null,
      tmax: known ? tmax : null,
      slices,
      timeline: { width: TimelineWidth, height: TimelineHeight },
      extensions: stats,
      deaths,
      vetoes: Array.from(vetoes.keys())
        .sort()
        .map((name) => veto(name)),
      strings,
      askedSets,
      rows
    }
  }

  return { add, finish }
}
