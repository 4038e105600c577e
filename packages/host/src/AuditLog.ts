import { Context, Effect, FileSystem, Layer, Ref, Schema, Semaphore } from "effect"
import { type AuditContent, auditView, type ContentDigest } from "./AuditContent.ts"

/**
 * One record per dispatch (docs/design.md#architecture). Extension entries are sorted by name, so identical inputs give identical
 * records except for the timing fields (`latency_ms`, `duration_ms`).
 */
export type ExchangeStatus =
  | "replied"
  | "timed_out"
  | "exited"
  | "malformed"
  | "unsolicited"
  | "too_long"
  | "dead"
  | "not_subscribed"
  | "not_matched"

export interface AuditExchange {
  readonly extension: string
  readonly status: ExchangeStatus
  readonly latency_ms: number
  /** The decoded reply, when the extension replied. */
  readonly reply?: unknown
  /** Known reply fields that belong to other events (ignored). */
  readonly ignored?: ReadonlyArray<string>
  /** Why the exchange failed, when it did. */
  readonly error?: string
  /**
   * A dead extension's own word on why (the line of its stderr that names the error), when it wrote one: verbatim
   * with `--audit-content full`, else as `{sha256, bytes}` like every content (stderr can hold what the extension saw).
   */
  readonly stderr?: string | ContentDigest
}

export interface AuditRound {
  readonly round: number
  readonly exchanges: ReadonlyArray<AuditExchange>
}

export interface AuditRecord {
  readonly seq: number
  /** The session the dispatch belongs to: one file may hold several sessions' records. */
  readonly session_id: string
  /** When the dispatch began (ISO 8601, from the effect Clock). */
  readonly time: string
  readonly event: string
  readonly call_id: string | undefined
  /**
   * For tool_call, tool_result and invoke_tool: the tool, and the args as the agent passed them, which the first
   * round judged (verbatim, like the outcome's: docs/design.md#failures). Absent args: the host could not send them (`notes`).
   */
  readonly tool?: string
  readonly args?: { readonly [key: string]: unknown }
  readonly rounds: ReadonlyArray<AuditRound>
  readonly outcome: unknown
  /** Anything else worth keeping: rejected tools, out-of-range keep indices, the policy decision. */
  readonly notes: ReadonlyArray<string>
  readonly duration_ms: number
}

/**
 * The record with its timing fields zeroed (`time`, `duration_ms`, every `latency_ms`): what docs/design.md#combination promises is
 * the same whatever the load order and the schedule. For comparing records, in tests and in replays.
 */
export const withoutTimings = (record: AuditRecord): AuditRecord => ({
  ...record,
  time: "",
  duration_ms: 0,
  rounds: record.rounds.map((round) => ({ ...round, exchanges: round.exchanges.map((x) => ({ ...x, latency_ms: 0 })) }))
})

export class AuditWriteError extends Schema.TaggedError<AuditWriteError>()("AuditWriteError", {
  path: Schema.String,
  detail: Schema.String
}) {}

export class AuditLog extends Context.Service<AuditLog, {
  readonly record: (record: AuditRecord) => Effect.Effect<void>
  /** Records kept in memory (empty for sinks that keep nothing). */
  readonly entries: Effect.Effect<ReadonlyArray<AuditRecord>>
  /**
   * `false`: this sink keeps nothing, so the host neither builds records for it nor calls `record` (what
   * `layerNone` says). Absent or `true`: every dispatch is recorded.
   */
  readonly enabled?: boolean | undefined
}>()("@abhed/host/AuditLog") {
  /**
   * Keeps every record in memory, as it is (content verbatim: nothing is written anywhere): for tests, the demo and
   * short sessions. A sink of your own can keep what the JSONL sink keeps with `auditView(record, "digest")`.
   */
  static readonly layerMemory = Layer.effect(
    AuditLog,
    Effect.gen(function*() {
      const ref = yield* Ref.make<ReadonlyArray<AuditRecord>>([])
      return AuditLog.of({
        record: (r) => Ref.update(ref, (all) => [...all, r]),
        entries: Ref.get(ref)
      })
    })
  )

  /** Discards every record: the host does not even build them (`enabled: false`). */
  static readonly layerNone = Layer.succeed(
    AuditLog,
    AuditLog.of({ record: () => Effect.void, entries: Effect.succeed([]), enabled: false })
  )

  /**
   * Appends one JSON line per record to `path`. The file is opened once for the layer's lifetime, and created with
   * mode 0600 (owner only): records hold args verbatim. An existing file keeps its mode (the operator chose it), with
   * a warning when others may read it. Content is recorded as `{sha256, bytes}` unless `content: "full"` (docs/design.md#failures,
   * `AuditContent`). A write that fails is logged and does not fail the dispatch: the audit trail must never take
   * the agent down.
   */
  static readonly layerJsonl = (path: string, options?: AuditJsonlOptions) =>
    Layer.effect(
      AuditLog,
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const content = options?.content ?? "digest"
        const file = yield* fs.open(path, { flag: "a", mode: 0o600 }).pipe(
          Effect.mapError((e) => new AuditWriteError({ path, detail: e.message }))
        )
        const info = yield* Effect.option(file.stat)
        if (info._tag === "Some" && (info.value.mode & 0o077) !== 0) {
          const mode = (info.value.mode & 0o777).toString(8).padStart(4, "0")
          yield* Effect.logWarning(`audit log ${path} may be read by others (mode ${mode}): chmod 600 ${path}`)
        }
        const encoder = new TextEncoder()
        // Concurrent dispatches finish concurrently: one writer at a time keeps every line whole.
        const lock = yield* Semaphore.make(1)
        return AuditLog.of({
          record: (r) =>
            Effect.suspend(() => file.writeAll(encoder.encode(`${JSON.stringify(auditView(r, content))}\n`))).pipe(
              Effect.catch((e) => Effect.logWarning(`audit log ${path}: ${e.message}`)),
              // A record JSON cannot hold (from an embedder's own values) is one lost line, not a dead agent.
              Effect.catchDefect((d) => Effect.logWarning(`audit log ${path}: record not written: ${String(d)}`)),
              lock.withPermit
            ),
          entries: Effect.succeed([])
        })
      })
    )
}

export interface AuditJsonlOptions {
  /** `"digest"` (default): content as `{sha256, bytes}`; `"full"`: verbatim, secrets included. */
  readonly content?: AuditContent | undefined
}
