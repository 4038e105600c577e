import type { EventName } from "@abhed/protocol/Event"
import { isJsonObject } from "@abhed/protocol/Json"
import { hash } from "node:crypto"
import type { ContentDigest } from "./AuditContent.ts"
import type { AuditExchange, AuditRecord } from "./AuditRecord.ts"
import type { Exchange } from "./dispatch/Exchange.ts"
import { type HomeTexts, homeTexts, ScrubMax, unquoted } from "./TelemetryQuotes.ts"

/**
 * What of a dispatch leaves the host as telemetry: the decision and who made it, never the content. No tool
 * result, no context message, no summary, no stderr line, no rewritten args; the agent's args only as their digest
 * unless the operator opted in (`args: "full"`). Reasons are the extensions' own words, kept to `ReasonMax` chars,
 * less what they quote of what stays home (TelemetryQuotes.ts).
 */
export const ReasonMax = 256

/**
 * The args' digest, as the audit writes content (`contentDigest`: SHA-256 of the JSON text, and its UTF-8 bytes),
 * by Node's one-shot `hash`: on the dispatch's path, about a quarter of the time of a `createHash` object.
 */
export const argsDigest = (args: unknown): ContentDigest => {
  const known = typeof args === "object" && args !== null ? digests.get(args) : undefined
  if (known !== undefined) return known
  const text = JSON.stringify(args) ?? "null"
  const digest = { sha256: hash("sha256", text, "hex"), bytes: Buffer.byteLength(text, "utf8") }
  if (typeof args === "object" && args !== null) digests.set(args, digest)
  return digest
}

/** A record's args are hashed for its span and again for its log record: the second time is this lookup. */
const digests = new WeakMap<object, ContentDigest>()

/**
 * At most `ReasonMax` chars: an extension's reason, and the names the agent chose (tool, call id, session id), which
 * could otherwise make one span a megabyte, and the collector refuse the batch around it.
 */
export const bounded = (text: string): string => (text.length <= ReasonMax ? text : `${text.slice(0, ReasonMax - 1)}…`)
const boundedOrNot = (text: string | undefined): string | undefined => (text === undefined ? text : bounded(text))

/** An extension's verdict in its reply: deny, ask, rewrite (it proposed a change), or none. */
export const verdictOf = (reply: unknown): string => {
  if (!isJsonObject(reply)) return "none"
  if (reply["block"] === true) return "deny"
  if (reply["ask"] === true) return "ask"
  for (const key of Object.keys(reply)) if (key !== "reason" && key !== "block" && key !== "ask") return "rewrite"
  return "none"
}

/**
 * A reply's reason as it leaves: without what it quotes of `texts` (TelemetryQuotes.ts), bounded. `null`: as it is
 * (an embedder's own tracer, in its own process); `undefined` texts: too much to compare, so none leaves. `texts` is
 * asked for only when there is a reason: most replies have none, and their dispatch's text is never walked.
 */
export const reasonOf = (reply: unknown, texts: (() => HomeTexts) | null = null): string | undefined => {
  if (!isJsonObject(reply) || typeof reply["reason"] !== "string") return undefined
  return texts === null ? bounded(reply["reason"]) : leaving(reply["reason"], texts)
}

export { ScrubMax } from "./TelemetryQuotes.ts"

/** A reason as it leaves: its first `ScrubMax` chars less what they quote of `texts`, bounded; `undefined`: none leaves. */
export const leaving = (reason: string, texts: () => HomeTexts): string | undefined => {
  const long = reason.length > ScrubMax
  const cut = unquoted(long ? reason.slice(0, ScrubMax) : reason, texts())
  if (cut === undefined) return undefined
  return bounded(long && cut.length < ReasonMax ? `${cut}…` : cut)
}

interface NamedReason {
  readonly extension: string
  readonly reason: string
}
const reasonsIn = (value: unknown): ReadonlyArray<NamedReason> =>
  Array.isArray(value)
    ? value.flatMap((r) =>
        isJsonObject(r) && typeof r["extension"] === "string" && typeof r["reason"] === "string"
          ? [{ extension: r["extension"], reason: r["reason"] }]
          : []
      )
    : []

/** The outcome's decision-shaped fields, whatever the event: decision, reasons (or withheld), rounds, rewriters. */
export interface OutcomeSummary {
  readonly decision: string | undefined
  readonly reasons: ReadonlyArray<NamedReason>
  readonly rounds: number | undefined
  readonly rewrittenBy: ReadonlyArray<string>
}
export const outcomeSummary = (outcome: unknown): OutcomeSummary => {
  if (!isJsonObject(outcome)) return { decision: undefined, reasons: [], rounds: undefined, rewrittenBy: [] }
  const rewrittenBy = outcome["rewrittenBy"]
  return {
    decision: typeof outcome["decision"] === "string" ? outcome["decision"] : undefined,
    reasons: [...reasonsIn(outcome["reasons"]), ...reasonsIn(outcome["withheld"])],
    rounds: typeof outcome["rounds"] === "number" ? outcome["rounds"] : undefined,
    rewrittenBy: Array.isArray(rewrittenBy) ? rewrittenBy.filter((x): x is string => typeof x === "string") : []
  }
}

/** Who decided: the extensions the outcome's reasons name, once each, in order. */
export const decidingOf = (summary: OutcomeSummary): ReadonlyArray<string> => [
  ...new Set(summary.reasons.map((r) => r.extension))
]

/** What a dispatch's span starts with: its event, session, tool and call id. */
export interface DispatchFields {
  readonly event: EventName
  readonly sessionId: string
  readonly callId: string | undefined
  readonly tool: string | undefined
}

/**
 * Where attributes go, one at a time: the exporters write each straight into a batch's body (no attribute object or
 * array per item); `collect` makes them a record where one is wanted.
 */
export type Put = (key: string, value: unknown) => void

export const collect = (fill: (put: Put) => void): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  fill((key, value) => {
    out[key] = value
  })
  return out
}

/** A dispatch span's first attributes (the GenAI conventions' names where they have one). */
export const putDispatch = (d: DispatchFields, put: Put): void => {
  put("abhed.event", d.event)
  put("gen_ai.conversation.id", bounded(d.sessionId))
  if (d.callId !== undefined) put("gen_ai.tool.call.id", bounded(d.callId))
  if (d.tool !== undefined) {
    put("gen_ai.tool.name", bounded(d.tool))
    put("gen_ai.operation.name", "execute_tool")
  }
}

/**
 * An exchange's child span's attributes: its extension, round, status, verdict, bounded reason and failure. `texts`:
 * what its dispatch keeps home, cut out of the reason (`reasonOf`).
 */
export const putExchange = (
  x: Exchange<EventName>,
  round: number,
  put: Put,
  texts: (() => HomeTexts) | null = null
): void => {
  put("abhed.extension.name", x.extension.name)
  put("abhed.round", round)
  put("abhed.extension.status", x.status)
  put("abhed.extension.latency_ms", x.latency_ms)
  if (x.reply !== undefined) {
    put("abhed.extension.verdict", verdictOf(x.reply))
    const reason = reasonOf(x.reply, texts)
    if (reason !== undefined) put("abhed.extension.reason", reason)
  }
  if (x.error !== undefined) {
    put("abhed.extension.error", bounded(x.error))
    put("abhed.extension.on_failure", x.extension.config.on_failure)
  }
}

/** The span's attributes a dispatch's record adds once it is decided. */
export const putRecord = (
  record: AuditRecord,
  args: "digest" | "full",
  put: Put,
  summary: OutcomeSummary = outcomeSummary(record.outcome)
): void => {
  put("abhed.seq", record.seq)
  put("abhed.duration_ms", record.duration_ms)
  if (summary.decision !== undefined) put("abhed.decision", summary.decision)
  if (summary.rounds !== undefined) put("abhed.rounds", summary.rounds)
  const deciding = decidingOf(summary)
  if (deciding.length > 0) put("abhed.deciding_extensions", deciding)
  if (summary.rewrittenBy.length > 0) put("abhed.rewriting_extensions", summary.rewrittenBy)
  if (record.args !== undefined) {
    if (args === "full") put("gen_ai.tool.call.arguments", JSON.stringify(record.args))
    else {
      const digest = argsDigest(record.args)
      put("abhed.args.sha256", digest.sha256)
      put("abhed.args.bytes", digest.bytes)
    }
  }
}

export const dispatchAttributes = (d: DispatchFields): Record<string, unknown> => collect((put) => putDispatch(d, put))
export const exchangeAttributes = (
  x: Exchange<EventName>,
  round: number,
  texts: (() => HomeTexts) | null = null
): Record<string, unknown> => collect((put) => putExchange(x, round, put, texts))
export const recordAttributes = (record: AuditRecord, args: "digest" | "full"): Record<string, unknown> =>
  collect((put) => putRecord(record, args, put))

// Undefined fields are left out of the JSON text: one literal each, no spreads (these are written once per record).
const exchangeView = (x: AuditExchange, texts: () => HomeTexts) => ({
  extension: x.extension,
  status: x.status,
  latency_ms: x.latency_ms,
  verdict: x.status === "replied" ? verdictOf(x.reply) : undefined,
  reason: reasonOf(x.reply, texts),
  // The failure by its shape (exited (code 1), timed_out (500 ms)): never the extension's stderr.
  error: x.error !== undefined ? bounded(x.error) : undefined
})

/** The audit record as a log record's body, to be written as JSON: its decision and every exchange's verdict, without content. */
export const logBody = (
  record: AuditRecord,
  args: "digest" | "full",
  summary: OutcomeSummary = outcomeSummary(record.outcome),
  // Walked at the first reason only (and kept per record by homeTexts).
  texts: () => HomeTexts = () => homeTexts(record, args)
) => ({
  seq: record.seq,
  session_id: bounded(record.session_id),
  time: record.time,
  event: record.event,
  call_id: boundedOrNot(record.call_id),
  tool: boundedOrNot(record.tool),
  args: record.args === undefined ? undefined : args === "full" ? record.args : argsDigest(record.args),
  decision: summary.decision,
  reasons: summary.reasons.map((r) => ({ extension: r.extension, reason: leaving(r.reason, texts) })),
  rounds: summary.rounds,
  rewritten_by: summary.rewrittenBy.length > 0 ? summary.rewrittenBy : undefined,
  exchanges: record.rounds.map((round) => ({
    round: round.round,
    exchanges: round.exchanges.map((x) => exchangeView(x, texts))
  })),
  duration_ms: record.duration_ms
})
