import { MaxJsonDepth, nestedDeeperThan } from "@abhed/protocol"
import { renderPath, schemaProblems } from "@abhed/protocol/ConfigIssues"
import { Result, Schema } from "effect"

/**
 * One line of an audit file read back, by `audit` and `replay`: the record as `run --audit` (AuditLog.layerJsonl)
 * writes it, checked for the fields they use. A file is someone else's text (another tool may write it, a disk may
 * cut it): every line is checked, and the fields are typed as they are promised, nothing more (a status or event
 * this version does not know is shown as it is; replay counts such an exchange as failed).
 */

const Digest = Schema.Struct({ sha256: Schema.String, bytes: Schema.Number })

const Exchange = Schema.Struct({
  extension: Schema.String,
  status: Schema.String,
  latency_ms: Schema.Number,
  reply: Schema.optionalKey(Schema.Unknown),
  ignored: Schema.optionalKey(Schema.Array(Schema.String)),
  error: Schema.optionalKey(Schema.String),
  stderr: Schema.optionalKey(Schema.Union([Schema.String, Digest])),
  /** A `failed` reply's words (absent from a record written before they were kept). */
  failed: Schema.optionalKey(Schema.Union([Schema.String, Digest]))
})

const Round = Schema.Struct({ round: Schema.Number, exchanges: Schema.Array(Exchange) })

export const AuditEntryRecord = Schema.Struct({
  seq: Schema.Number,
  session_id: Schema.String,
  time: Schema.String,
  event: Schema.String,
  call_id: Schema.optionalKey(Schema.String),
  tool: Schema.optionalKey(Schema.String),
  args: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  rounds: Schema.Array(Round),
  outcome: Schema.Unknown,
  input: Schema.optionalKey(Schema.Unknown),
  notes: Schema.Array(Schema.String),
  duration_ms: Schema.Number
})
export type AuditEntryRecord = typeof AuditEntryRecord.Type
export type AuditEntryExchange = typeof Exchange.Type
export type AuditEntryRound = typeof Round.Type

/** A tool_call's outcome, as the host records it: read apart, so that an odd outcome still shows the record. */
const ToolCallOutcome = Schema.Struct({
  decision: Schema.Literals(["allow", "ask", "deny"]),
  reasons: Schema.Array(Schema.Struct({ extension: Schema.String, reason: Schema.String })),
  args: Schema.optionalKey(Schema.Unknown),
  rounds: Schema.optionalKey(Schema.Number),
  rewrittenBy: Schema.optionalKey(Schema.Array(Schema.String))
})
export type ToolCallOutcome = typeof ToolCallOutcome.Type

const decodeOutcome = Schema.decodeUnknownResult(ToolCallOutcome)

/** The tool_call outcome of a record, when it is one. */
export const toolCallOutcome = (record: AuditEntryRecord): ToolCallOutcome | undefined => {
  if (record.event !== "tool_call") return undefined
  const decoded = decodeOutcome(record.outcome)
  return Result.isSuccess(decoded) ? decoded.success : undefined
}

/** A record with where it was read: the file, its line (1-based), and the line itself, unchanged (for `--json`). */
export interface AuditEntry {
  readonly file: string
  readonly line: number
  readonly text: string
  readonly record: AuditEntryRecord
}

/** A line that is not a record: where, and what is wrong with it. */
export interface BadLine {
  readonly file: string
  readonly line: number
  readonly problem: string
}

const decodeRecord = Schema.decodeUnknownResult(AuditEntryRecord)

/**
 * How deep a record may nest: what the host sends and reads nests at most `MaxJsonDepth` levels, and a record holds
 * it a few levels down (`rounds[].exchanges[].reply.args`). A deeper line is not the host's, and reading it would
 * overflow the stack of whatever walks it (the report's, replay's).
 */
export const MaxRecordDepth = MaxJsonDepth + 8

/** One line of `file` (number `line`), read: the entry, or what is wrong with it. */
export const readLine = (file: string, line: number, text: string): AuditEntry | BadLine => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    return { file, line, problem: `not JSON (${e instanceof Error ? e.message : String(e)})` }
  }
  if (nestedDeeperThan(parsed, MaxRecordDepth)) {
    return { file, line, problem: `not an audit record: nested more than ${MaxRecordDepth} levels deep` }
  }
  const decoded = decodeRecord(parsed, { errors: "all", reportInput: true })
  if (Result.isSuccess(decoded)) return { file, line, text, record: decoded.success }
  // Every problem by its field, in the words of the config's errors (`seq: must be a number, got "x"`).
  const problems = schemaProblems(decoded.failure.issue).map((p) => `${renderPath(p.path)}: ${p.message}`)
  return { file, line, problem: `not an audit record: ${problems.join("; ")}` }
}

export const isBadLine = (read: AuditEntry | BadLine): read is BadLine => "problem" in read
