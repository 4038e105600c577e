import { printable } from "@abhed/host/Printable"
import { isJsonObject, jsonEquals } from "@abhed/protocol"
import { describeReply } from "../demo/DemoTable.ts"
import { decisionColour, roundRows } from "../demo/RoundRows.ts"
import type { Style } from "../Style.ts"
import { type AuditEntry, type AuditEntryExchange, type AuditEntryRecord, toolCallOutcome } from "./AuditEntry.ts"

/**
 * An audit record in words, laid out as the demo lays out a line (pure): the request, what each extension said in
 * each round (or why it failed), the allows that counted for nothing, the notes (the policy's rule among them), the
 * decision and the timings. A record is someone else's text: every value from it is shown escaped (`printable`),
 * so it cannot drive the terminal; the styling around it is ours.
 */

const p = printable
const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text)
const json = (u: unknown, max = 90): string => p(clip(JSON.stringify(u) ?? String(u), max))
const ms = (n: number): string => `${n < 10 ? Math.round(n * 10) / 10 : Math.round(n)} ms`

/** A tool_call reply with a reason and neither block nor ask: an allow, which an extension cannot give. */
export const isIgnoredAllow = (event: string, reply: unknown): boolean =>
  event === "tool_call" &&
  isJsonObject(reply) &&
  typeof reply["reason"] === "string" &&
  reply["reason"] !== "" &&
  reply["block"] !== true &&
  reply["ask"] !== true

/**
 * Why an extension failed in its own words (a dead one's stderr line, a `failed` reply's text): the words when the
 * audit kept them (`--audit-content full`), else their digest.
 */
const wordsOf = (label: string, words: AuditEntryExchange["stderr"]): string =>
  words === undefined
    ? ""
    : typeof words === "string"
      ? `; ${label}: ${p(clip(words, 160))}`
      : `; ${label}: ${words.bytes} bytes, sha256 ${p(words.sha256.slice(0, 12))}… (kept with --audit-content full)`

const exchangeRow = (event: string, x: AuditEntryExchange, s: Style, width: number, current: unknown): string => {
  const name = p(x.extension).padEnd(width)
  const time = ms(x.latency_ms).padStart(8)
  if (x.status === "replied") {
    const said = p(describeReply(event, x.reply, current))
    const quiet = said === "no opinion" || said === "args unchanged" || said === "content unchanged"
    const allow = isIgnoredAllow(event, x.reply)
      ? s.yellow(" (an allow: ignored, an extension may veto, never permit)")
      : ""
    const ignored =
      x.ignored !== undefined && x.ignored.length > 0 ? s.dim(` (ignored: ${x.ignored.map(p).join(", ")})`) : ""
    return `    ${name} ${s.dim(time)}  ${quiet ? s.dim(said) : said}${allow}${ignored}`
  }
  if (x.status === "not_matched") {
    return `    ${name} ${s.dim(`${"—".padStart(8)}  not matched: skipped by its match rules, not written`)}`
  }
  // A `failed` reply's other fields: ignored, and said (a block beside it is no block).
  const ignored =
    x.ignored !== undefined && x.ignored.length > 0 ? s.dim(` (ignored: ${x.ignored.map(p).join(", ")})`) : ""
  return `    ${name} ${s.dim(time)}  ${s.red(`${p(x.status.toUpperCase())}: ${p(x.error ?? "no reply")}${wordsOf("its stderr", x.stderr)}${wordsOf("it said", x.failed)}`)}${ignored}`
}

/** The first line: which call, the request, and where the record is. */
const header = (entry: AuditEntry, s: Style): string => {
  const r = entry.record
  const id = r.call_id !== undefined ? `${p(r.call_id)} ` : ""
  const request = r.tool !== undefined ? ` ${p(r.tool)}${r.args !== undefined ? ` ${json(r.args, 100)}` : ""}` : ""
  const where = s.dim(`  (session ${p(r.session_id)}, seq ${r.seq}, ${p(r.time)}; ${p(entry.file)}:${entry.line})`)
  return `${s.bold(`── ${id}${p(r.event)}`)}${request}${where}`
}

/** The last line: what was decided, after how many rounds, by whom rewritten, and how long it took. */
const outcomeLine = (r: AuditEntryRecord, s: Style): string => {
  const took = `${ms(r.duration_ms)} in all`
  const outcome = toolCallOutcome(r)
  if (outcome === undefined) {
    const shown = isJsonObject(r.outcome) && Object.keys(r.outcome).length === 0 ? "nothing to decide" : json(r.outcome)
    return `  → ${shown}; ${took}`
  }
  const reasons = outcome.reasons.map((x) => `${p(x.extension)}: ${p(x.reason)}`).join("; ")
  const rounds = outcome.rounds !== undefined ? ` after ${outcome.rounds} round${outcome.rounds === 1 ? "" : "s"}` : ""
  const rewritten =
    outcome.args !== undefined && r.args !== undefined && !jsonEquals(outcome.args, r.args)
      ? `; args rewritten to ${json(outcome.args, 80)}${
          outcome.rewrittenBy !== undefined && outcome.rewrittenBy.length > 0
            ? ` by ${outcome.rewrittenBy.map(p).join(", ")}`
            : ""
        }`
      : ""
  const verdict = decisionColour(outcome.decision, s)(s.bold(outcome.decision.toUpperCase()))
  return `  → ${verdict}${reasons === "" ? "" : ` (${reasons})`}${rounds}${rewritten}; ${took}`
}

/** One record as the demo shows a line. */
export const renderEntry = (entry: AuditEntry, s: Style): string => {
  const r = entry.record
  const first = r.event === "tool_call" ? r.args : undefined
  const rows = roundRows(r, first, s, (x, width, current) => exchangeRow(r.event, x, s, width, current), p)
  return [header(entry, s), ...rows, outcomeLine(r, s)].join("\n")
}
