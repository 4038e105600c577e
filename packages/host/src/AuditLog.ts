import { Context, Effect, Layer, Ref, Schema, Semaphore } from "effect"
import { type AuditContent, auditView } from "./AuditContent.ts"
import type { AuditRecord } from "./AuditRecord.ts"
import { openForAppend } from "./RegularFile.ts"
import * as NodeFs from "node:fs"

// The record's shape has its own file, which AuditContent.ts reads too: importing it from here would tie the two
// files in a cycle.
export type { AuditExchange, AuditRecord, AuditRound, ExchangeStatus } from "./AuditRecord.ts"

/**
 * The record with its timing fields zeroed (`time`, `duration_ms`, every `latency_ms`): what docs/design.md#combination
 * promises is the same whatever the load order and the schedule. For comparing records, in tests and in replays.
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

export class AuditLog extends Context.Service<
  AuditLog,
  {
    readonly record: (record: AuditRecord) => Effect.Effect<void>
    /** Records kept in memory (empty for sinks that keep nothing). */
    readonly entries: Effect.Effect<ReadonlyArray<AuditRecord>>
    /**
     * `false`: this sink keeps nothing, so the host neither builds records for it nor calls `record` (what
     * `layerNone` says). Absent or `true`: every dispatch is recorded.
     */
    readonly enabled?: boolean | undefined
    /** The records this sink could not write: how many, and why the first was not (`layerJsonl`; none: undefined). */
    readonly unwritten?: Effect.Effect<AuditUnwritten | undefined> | undefined
  }
>()("@abhed/host/AuditLog") {
  /**
   * Keeps every record in memory, as it is (content verbatim: nothing is written anywhere): for tests, the demo and
   * short sessions. A sink of your own can keep what the JSONL sink keeps with `auditView(record, "digest")`.
   */
  static readonly layerMemory = Layer.effect(
    AuditLog,
    Effect.gen(function* () {
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
   * a warning when others may read it. The file is refused (`AuditWriteError`, before anything runs) when it is a
   * symbolic link (it is opened without following one), not a regular file (a FIFO would hang the open), or owned by
   * another user. Content is recorded as `{sha256, bytes}` unless `content: "full"` (docs/design.md#audit,
   * `AuditContent`). A write that fails does not fail the dispatch (the audit trail must never take the agent down):
   * the first failure is logged, once, and every record lost is counted (`unwritten`). A write that failed may have
   * left part of its line in the file: the next record starts on a line of its own, so only the torn line is lost.
   */
  static readonly layerJsonl = (path: string, options?: AuditJsonlOptions) =>
    Layer.effect(
      AuditLog,
      Effect.gen(function* () {
        const content = options?.content ?? "digest"
        const { handle, stats } = yield* openForAppend(path, 0o600).pipe(
          Effect.mapError((e) => new AuditWriteError({ path, detail: e.detail }))
        )
        if ((stats.mode & 0o077) !== 0) {
          const mode = (stats.mode & 0o777).toString(8).padStart(4, "0")
          yield* Effect.logWarning(`audit log ${path} may be read by others (mode ${mode}): chmod 600 ${path}`)
        }
        const encoder = new TextEncoder()
        // Whether the file may end inside a line: after a failed write (EFBIG, ENOSPC, EIO) of which part went in,
        // or left so by an earlier run (a full disk, a kill mid-write). The next record then starts a line of its own.
        let torn = yield* endsInsideLine(path, stats.size)
        const writeAll = (bytes: Uint8Array): Promise<void> =>
          handle
            .write(bytes)
            .then(({ bytesWritten }) =>
              bytesWritten < bytes.length ? writeAll(bytes.subarray(bytesWritten)) : undefined
            )
        // Concurrent dispatches finish concurrently: one writer at a time keeps every line whole.
        const lock = yield* Semaphore.make(1)
        let unwritten: AuditUnwritten | undefined
        const lost = (detail: string) =>
          Effect.suspend(() => {
            const first = unwritten === undefined
            unwritten = { records: (unwritten?.records ?? 0) + 1, detail: unwritten?.detail ?? detail }
            return first
              ? Effect.logWarning(`audit log ${path}: ${detail}: records are not being written (said once)`)
              : Effect.void
          })
        return AuditLog.of({
          record: (r) =>
            Effect.suspend(() => {
              const text = `${JSON.stringify(auditView(r, content))}\n`
              return Effect.tryPromise({
                try: async () => {
                  // Seen again now: another run appending to the same file may have been mid-line when it was seen
                  // (at the open), and has ended its line since; a newline then would be an empty line.
                  // Not seen (the file no longer readable): a newline, as the open saw it.
                  const prefix =
                    torn &&
                    (await handle
                      .stat()
                      .then(({ size }) => lastLineOpen(path, size))
                      .catch(() => true))
                      ? "\n"
                      : ""
                  await writeAll(encoder.encode(prefix + text))
                  torn = false
                },
                catch: (e) => {
                  torn = true
                  return new AuditWriteError({ path, detail: e instanceof Error ? e.message : String(e) })
                }
              })
            }).pipe(
              Effect.catch((e) => lost(e.detail)),
              // A record JSON cannot hold (from an embedder's own values) is one lost line, not a dead agent.
              Effect.catchDefect((d) => lost(`record not written: ${String(d)}`)),
              lock.withPermit
            ),
          entries: Effect.succeed([]),
          unwritten: Effect.sync(() => unwritten)
        })
      })
    )
}

/**
 * Whether the last byte of the file at `path` (of `size` bytes) is not a line end. Read through a second descriptor
 * (the trail's own is write-only); if it cannot be read, the file is taken to end a line.
 */
const lastLineOpen = async (path: string, size: number): Promise<boolean> => {
  if (size === 0) return false
  const { O_NOFOLLOW, O_NONBLOCK, O_RDONLY } = NodeFs.constants
  const file = await NodeFs.promises.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(1), 0, 1, size - 1)
    return bytesRead === 1 && buffer[0] !== 0x0a
  } finally {
    await file.close()
  }
}

const endsInsideLine = (path: string, size: number): Effect.Effect<boolean> =>
  Effect.promise(() => lastLineOpen(path, size)).pipe(Effect.catchDefect(() => Effect.succeed(false)))

/** What a sink could not write: how many records, and why the first was not. */
export interface AuditUnwritten {
  readonly records: number
  readonly detail: string
}

export interface AuditJsonlOptions {
  /** `"digest"` (default): content as `{sha256, bytes}`; `"full"`: verbatim, secrets included. */
  readonly content?: AuditContent | undefined
}
