import type { AuditRound } from "@abhed/host"
import { Result, Schema } from "effect"

/**
 * The lines of audit files (`abhed-ext run --audit`) as `replay` reads them: each record with where it was read,
 * grouped into the sessions that made them. Pure. Only what replay uses is checked; other fields pass through.
 */

const Exchange = Schema.Struct({
  extension: Schema.String,
  status: Schema.Literals([
    "replied",
    "timed_out",
    "exited",
    "malformed",
    "unsolicited",
    "too_long",
    "dead",
    "not_subscribed",
    "not_matched"
  ]),
  latency_ms: Schema.Number,
  reply: Schema.optionalKey(Schema.Unknown)
})

const Record = Schema.Struct({
  seq: Schema.Number,
  session_id: Schema.String,
  event: Schema.String,
  call_id: Schema.optionalKey(Schema.String),
  tool: Schema.optionalKey(Schema.String),
  args: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  rounds: Schema.Array(Schema.Struct({ round: Schema.Number, exchanges: Schema.Array(Exchange) })),
  outcome: Schema.Unknown,
  input: Schema.optionalKey(Schema.Unknown),
  notes: Schema.Array(Schema.String)
})

export interface ReadRecord {
  /** `file:line`, as an editor shows it. */
  readonly where: string
  readonly seq: number
  readonly session_id: string
  readonly event: string
  readonly call_id: string | undefined
  readonly tool: string | undefined
  readonly args: { readonly [key: string]: unknown } | undefined
  readonly rounds: ReadonlyArray<AuditRound>
  readonly outcome: unknown
  /** What came in to a tool_result or context, when an extension acted on it (the host's `AuditRecord.input`). */
  readonly input?: unknown
  readonly notes: ReadonlyArray<string>
}

export interface Malformed {
  readonly where: string
  readonly problem: string
}

const oneLine = (message: string): string =>
  message
    .split("\n")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .join("; ")
const decodeRecord = Schema.decodeUnknownResult(Record, { errors: "all" })

/** One line of an audit file; blank lines are none (undefined). */
export const readRecord = (where: string, text: string): Result.Result<ReadRecord, Malformed> | undefined => {
  if (text.trim() === "") return undefined
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    return Result.fail({ where, problem: `not JSON: ${cause instanceof Error ? cause.message : String(cause)}` })
  }
  const decoded = decodeRecord(json)
  if (Result.isFailure(decoded))
    return Result.fail({ where, problem: `not an audit record: ${oneLine(decoded.failure.message)}` })
  const r = decoded.success
  return Result.succeed({
    where,
    seq: r.seq,
    session_id: r.session_id,
    event: r.event,
    call_id: r.call_id,
    tool: r.tool,
    args: r.args,
    rounds: r.rounds,
    outcome: r.outcome,
    input: r.input,
    notes: r.notes
  })
}

/** One run of a host: its session id, and its records in dispatch order. */
export interface RecordedSession {
  readonly sessionId: string
  readonly records: ReadonlyArray<ReadRecord>
}

/**
 * Records into sessions. One file may hold several sessions' records, interleaved (an embedder's concurrent
 * sessions), and one session id may come back (`run` appends every run to the same file under "abhed-ext"): a
 * `session_start` record begins a new session of its id. Sessions are in the order of their first record; each
 * session's records are in `seq` order, which is the order the host began the dispatches in.
 */
export const sessionsOf = (records: ReadonlyArray<ReadRecord>): ReadonlyArray<RecordedSession> => {
  const all: Array<{ sessionId: string; records: Array<ReadRecord> }> = []
  const current = new Map<string, { sessionId: string; records: Array<ReadRecord> }>()
  for (const r of records) {
    let session = current.get(r.session_id)
    if (session === undefined || r.event === "session_start") {
      session = { sessionId: r.session_id, records: [] }
      current.set(r.session_id, session)
      all.push(session)
    }
    session.records.push(r)
  }
  return all.map((s) => ({ sessionId: s.sessionId, records: [...s.records].sort((a, b) => a.seq - b.seq) }))
}
