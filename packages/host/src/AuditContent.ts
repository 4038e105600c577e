import { createHash } from "node:crypto"
import { isJsonObject } from "@abhed/protocol"
import type { AuditExchange, AuditRecord, AuditRound, ContentDigest, RecordedInput } from "./AuditRecord.ts"

export type { ContentDigest, RecordedInput } from "./AuditRecord.ts"

/**
 * What an audit record keeps of the content that flows through the host (docs/design.md#failures). A redactor's
 * proposal holds the very secret it removes, so by default content is recorded as `{sha256, bytes}`: enough to tell two
 * contents apart, or to match one you hold, and nothing to read. `"full"` keeps it verbatim, for an operator who opts
 * in. Args are always verbatim: the policy and the guards judge them, and the audit must show what they judged. A dead
 * extension's stderr line (an exchange's `stderr`) and a `failed` reply's words (an exchange's `failed`) are content
 * too: they can hold whatever the extension saw.
 */
export type AuditContent = "digest" | "full"

/** A string is digested as itself; any other JSON value as its JSON text. */
export const contentDigest = (value: unknown): ContentDigest => {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "null")
  const bytes = Buffer.from(text, "utf8")
  return { sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length }
}

/**
 * The content fields, per event: in the replies (proposals), in the outcome and in the input (what came in, when
 * an extension acted on it). `tool_result` content; an `invoke_tool` result (a tool's output, like a
 * tool_result's); the messages a `context` dispatch was sent and kept; a `before_compact` summary (a digest of
 * the conversation).
 */
const replyFields: { readonly [event: string]: ReadonlyArray<string> } = {
  tool_result: ["content"],
  invoke_tool: ["result"],
  before_compact: ["summary"]
}
const outcomeFields: { readonly [event: string]: ReadonlyArray<string> } = {
  tool_result: ["content"],
  invoke_tool: ["result"],
  context: ["messages"],
  before_compact: ["summary"]
}
/** An input's content: a tool_result's content (its is_error stays), a context's messages. */
const digestInput = (input: RecordedInput): RecordedInput =>
  "content" in input
    ? { content: contentDigest(input.content), is_error: input.is_error }
    : { messages: contentDigest(input.messages) }

/** A copy of `value` with each named field that is present (and not null) replaced by its digest. */
const digestFields = (value: unknown, fields: ReadonlyArray<string>): unknown => {
  if (!isJsonObject(value) || !fields.some((f) => value[f] !== undefined && value[f] !== null)) return value
  const out: Record<string, unknown> = { ...value }
  for (const f of fields) {
    const v = value[f]
    if (v !== undefined && v !== null) out[f] = contentDigest(v)
  }
  return out
}

/** An exchange with the extension's own words on why it failed: its stderr line, or its `failed` reply's text. */
const hasWords = (x: AuditExchange): boolean => typeof x.stderr === "string" || typeof x.failed === "string"
const digestWords = (x: AuditExchange): AuditExchange => ({
  ...x,
  ...(typeof x.stderr === "string" ? { stderr: contentDigest(x.stderr) } : {}),
  ...(typeof x.failed === "string" ? { failed: contentDigest(x.failed) } : {})
})

/** The record as the sink keeps it: content digested (`"digest"`), or as it is (`"full"`). */
export const auditView = (record: AuditRecord, content: AuditContent): AuditRecord => {
  if (content === "full") return record
  const inReplies = replyFields[record.event] ?? []
  const inOutcome = outcomeFields[record.event] ?? []
  // A dead extension's stderr line, a `failed` reply's words: in any event's record.
  const words = record.rounds.some((round) => round.exchanges.some(hasWords))
  if (inReplies.length === 0 && inOutcome.length === 0 && record.input === undefined && !words) return record
  const rounds =
    inReplies.length === 0 && !words
      ? record.rounds
      : record.rounds.map(
          (round): AuditRound => ({
            ...round,
            exchanges: round.exchanges.map((x): AuditExchange => {
              const y = hasWords(x) ? digestWords(x) : x
              return y.reply === undefined ? y : { ...y, reply: digestFields(y.reply, inReplies) }
            })
          })
        )
  const outcome = digestFields(record.outcome, inOutcome)
  return record.input === undefined
    ? { ...record, rounds, outcome }
    : { ...record, rounds, outcome, input: digestInput(record.input) }
}
