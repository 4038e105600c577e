import { Result } from "effect"
import { type AuditEntryRound, isBadLine, readLine } from "../audit/AuditEntry.ts"

/**
 * The lines of audit files (`abhed-ext run --audit`) as `replay` reads them: each record with where it was read,
 * grouped into the sessions that made them. Pure. A line is read as `abhed-ext audit` reads it (AuditEntry.ts).
 */

export interface ReadRecord {
  /** `file:line`, as an editor shows it. */
  readonly where: string
  readonly seq: number
  readonly session_id: string
  readonly event: string
  readonly call_id: string | undefined
  readonly tool: string | undefined
  readonly args: { readonly [key: string]: unknown } | undefined
  readonly rounds: ReadonlyArray<AuditEntryRound>
  readonly outcome: unknown
  /** What came in to a tool_result or context, when an extension acted on it (the host's `AuditRecord.input`). */
  readonly input?: unknown
  readonly notes: ReadonlyArray<string>
}

export interface Malformed {
  readonly where: string
  readonly problem: string
}

/** Line `line` of `file`; blank lines are none (undefined). */
export const readRecord = (
  file: string,
  line: number,
  text: string
): Result.Result<ReadRecord, Malformed> | undefined => {
  if (text.trim() === "") return undefined
  const where = `${file}:${line}`
  const read = readLine(file, line, text)
  if (isBadLine(read)) return Result.fail({ where, problem: read.problem })
  const r = read.record
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
