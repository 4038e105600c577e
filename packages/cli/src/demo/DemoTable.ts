import { formatReasons } from "@abhed/core"
import type { AuditExchange, AuditRecord } from "@abhed/host"
import { isJsonObject, jsonEquals } from "@abhed/protocol"
import type { InputRequest } from "../InputLine.ts"
import type { ErrorLine, OutputLine } from "../Output.ts"
import type { LineResult } from "../run/Session.ts"
import type { Style } from "../Style.ts"
import { decisionColour, roundRows } from "./RoundRows.ts"

/**
 * The demo's readable table (pure): for one input line, what each extension said in each round (from the audit
 * records), and what was decided. Plus the closing summary paragraph.
 */

const clip = (text: string, max = 90): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text)
const json = (u: unknown, max = 90): string => clip(JSON.stringify(u) ?? String(u), max)

/**
 * One extension's reply in words. `current`: what the round sent it, for the settling events: a proposal equal to
 * it changes nothing and is said so, not shown as a rewrite.
 */
export const describeReply = (event: string, reply: unknown, current?: unknown): string => {
  if (!isJsonObject(reply) || Object.keys(reply).length === 0) return "no opinion"
  const unchanged = (field: string) =>
    current !== undefined && reply[field] !== undefined && jsonEquals(reply[field], current)
  if (event === "tool_call") {
    const parts: Array<string> = []
    if (reply["block"] === true) parts.push("BLOCK")
    if (reply["ask"] === true) parts.push("ASK")
    if (typeof reply["reason"] === "string") parts.push(json(reply["reason"], 70))
    if (reply["args"] !== undefined) {
      parts.push(unchanged("args") ? "args unchanged" : `rewrite args → ${json(reply["args"], 70)}`)
    }
    return parts.length === 0 ? "no opinion" : parts.join(" ")
  }
  if (event === "tool_result" && unchanged("content")) {
    const rest = Object.entries(reply)
      .filter(([k]) => k !== "content")
      .map(([k, v]) => `${k}: ${json(v, 70)}`)
    return ["content unchanged", ...rest].join(", ")
  }
  if (event === "list_tools" && Array.isArray(reply["tools"])) {
    const names = reply["tools"].map((t) => (isJsonObject(t) && typeof t["name"] === "string" ? t["name"] : "?"))
    return `declares ${names.join(", ")}`
  }
  return Object.entries(reply)
    .map(([k, v]) => `${k}: ${json(v, 70)}`)
    .join(", ")
}

const exchangeRow = (event: string, x: AuditExchange, s: Style, width: number, current: unknown): string => {
  const name = x.extension.padEnd(width)
  const ms = `${Math.round(x.latency_ms)} ms`.padStart(7)
  if (x.status === "replied") {
    const said = describeReply(event, x.reply, current)
    const text = said === "no opinion" || said === "args unchanged" || said === "content unchanged" ? s.dim(said) : said
    const ignored = x.ignored !== undefined && x.ignored.length > 0 ? s.dim(` (ignored: ${x.ignored.join(", ")})`) : ""
    return `    ${name} ${s.dim(ms)}  ${text}${ignored}`
  }
  if (x.status === "not_matched")
    return `    ${name} ${s.dim(`${"—".padStart(7)}  not matched: skipped by its match rules, not written`)}`
  return `    ${name} ${s.dim(ms)}  ${s.red(`${x.status.toUpperCase()}: ${x.error ?? "no reply"}`)}`
}

/** What the first round of a settling event sent: the agent's args or content (undefined for the other events). */
const firstPayload = (input: InputRequest | undefined): unknown =>
  input?.event === "tool_call" ? input.args : input?.event === "tool_result" ? input.content : undefined

const recordRows = (record: AuditRecord, s: Style, input?: InputRequest): Array<string> =>
  roundRows(record, input?.event === record.event ? firstPayload(input) : undefined, s, (x, width, current) =>
    exchangeRow(record.event, x, s, width, current)
  )

/** The final decision of one line in words. */
export const describeOutcome = (input: InputRequest | undefined, output: OutputLine | ErrorLine, s: Style): string => {
  if ("error" in output) return s.red(`error: ${output.error}`)
  switch (output.event) {
    case "tool_call": {
      const reasons = formatReasons(output.reasons)
      const rewritten =
        input?.event === "tool_call" && !jsonEquals(input.args, output.args)
          ? `; args rewritten to ${json(output.args, 80)}`
          : ""
      const rounds = `${output.rounds} round${output.rounds === 1 ? "" : "s"}`
      return `${decisionColour(output.decision, s)(s.bold(output.decision.toUpperCase()))}${reasons === "" ? "" : ` (${reasons})`} after ${rounds}${rewritten}`
    }
    case "tool_result": {
      const changed = input?.event === "tool_result" && input.content !== output.content
      return `${changed ? s.yellow("content rewritten") : "content unchanged"}: ${json(output.content, 80)}${output.is_error ? s.red(" [is_error]") : ""}`
    }
    case "context": {
      const total = input?.event === "context" ? input.messages.length : output.keep.length
      const dropped = total - output.keep.length
      return `keep ${json(output.keep)}${dropped > 0 ? s.yellow(` (${dropped} of ${total} messages dropped)`) : " (all messages)"}`
    }
    case "before_agent_start":
      return `system prompt: ${json(output.system, 100)}`
    case "before_compact":
      return output.cancel
        ? s.yellow("compaction cancelled")
        : output.summary === null
          ? "no summary supplied: the agent summarizes itself"
          : `summary supplied: ${json(output.summary, 90)}`
    case "list_tools":
      return `tools: ${output.tools.map((t) => t.name).join(", ") || "none"}`
    case "invoke_tool":
      return `result: ${json(output.result, 90)}${output.is_error ? s.red(" [is_error]") : ""}`
    case "session_start":
      return s.dim("session_start is sent by the host when it starts (see above)")
    case "session_end":
      return s.dim("session_end is sent by the host to every extension as the session closes")
  }
}

const inputSummary = (input: InputRequest | undefined): string => {
  if (input === undefined) return ""
  switch (input.event) {
    case "tool_call":
    case "invoke_tool":
      return `${input.tool} ${json(input.args, 80)}${input.call_id !== undefined ? ` (${input.call_id})` : ""}`
    case "tool_result":
      return `${input.tool} → ${json(input.content, 70)}`
    case "context":
    case "before_compact":
      return `${input.messages.length} messages`
    case "before_agent_start":
      return json(input.system, 80)
    default:
      return ""
  }
}

/** The demo's words, said once before the first line. */
export const legend = (s: Style): string =>
  s.dim(
    [
      "How to read it: each line of the session is one event; under it, what each extension said, then (→) what was",
      'decided. "round N": a tool call (or result) is sent to every extension it concerns; when one rewrites it, the',
      'rewrite is sent to all of them again, round after round, until none changes it any more ("settled"), so every',
      'extension has seen what will run. "no opinion": the reply was {} (no veto, no change). "not matched": the',
      "extension's match rules leave this call out, so it was not asked. \"note: policy\": the operator's rules, joined",
      "with the extensions' verdicts: the stricter answer wins (deny > ask > allow), and no extension can permit."
    ].join("\n")
  )

/** A record the host made on its own (startup handshake, session_end at close). */
export const renderHostRecord = (record: AuditRecord, why: string, s: Style): string =>
  [s.cyan(`── host: ${record.event} ${s.dim(`(${why})`)}`), ...recordRows(record, s)].join("\n")

/** One input line: its header, the host records it caused (usually one), and the decision. */
export const renderLine = (result: LineResult, records: ReadonlyArray<AuditRecord>, s: Style): string => {
  const event = result.input?.event ?? "invalid line"
  const summary = inputSummary(result.input)
  const header = s.bold(`── line ${result.line}: ${event}`) + (summary === "" ? "" : ` ${summary}`)
  const rows = records.flatMap((r) => recordRows(r, s, result.input))
  return [header, ...rows, `  → ${describeOutcome(result.input, result.output, s)}`].join("\n")
}

export interface Tally {
  readonly events: number
  readonly calls: number
  readonly denied: number
  readonly asked: number
  readonly allowed: number
  readonly rewritten: number
  readonly results: number
  readonly redacted: number
  readonly dropped: number
  readonly summaries: number
  readonly errors: number
}

export const tally = (results: ReadonlyArray<LineResult>): Tally => {
  const t = {
    events: 0,
    calls: 0,
    denied: 0,
    asked: 0,
    allowed: 0,
    rewritten: 0,
    results: 0,
    redacted: 0,
    dropped: 0,
    summaries: 0,
    errors: 0
  }
  for (const { input, output } of results) {
    t.events++
    if ("error" in output) {
      t.errors++
      continue
    }
    if (output.event === "tool_call") {
      t.calls++
      if (output.decision === "deny") t.denied++
      else if (output.decision === "ask") t.asked++
      else t.allowed++
      if (input?.event === "tool_call" && !jsonEquals(input.args, output.args)) t.rewritten++
    } else if (output.event === "tool_result") {
      t.results++
      if (input?.event === "tool_result" && input.content !== output.content) t.redacted++
    } else if (output.event === "context" && input?.event === "context") {
      t.dropped += input.messages.length - output.keep.length
    } else if (output.event === "before_compact" && output.summary !== null) {
      t.summaries++
    }
  }
  return t
}

/** The closing paragraph. */
export const renderSummary = (t: Tally, dead: ReadonlyArray<string>): string =>
  `Summary: ${t.events} events. Of ${t.calls} tool calls, ${t.denied} denied, ${t.asked} asked for approval and ` +
  `${t.allowed} allowed; ${t.rewritten} had their args rewritten before running. ${t.redacted} of ${t.results} tool ` +
  `results were redacted or rewritten before the model saw them; ${t.dropped} context message(s) were dropped; ` +
  `${t.summaries} compaction summary(ies) supplied` +
  (t.errors > 0 ? `; ${t.errors} line(s) could not be decided` : "") +
  (dead.length > 0 ? `. Extensions that failed: ${dead.join(", ")}.` : ". Every extension stayed alive.")
