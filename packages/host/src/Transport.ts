import {
  type DecodedReply,
  decodeReply,
  type EventName,
  MalformedReply,
  replyIdOf,
  type ReadLine,
  shapeJson
} from "@abhed/protocol"
import { Effect, Exit, Result } from "effect"
import type { EncodedRequest } from "./Extension.ts"
import { type ExtensionDead, type ExtensionError, UnsolicitedOutput } from "./ExtensionError.ts"

/**
 * What carries an extension's bytes (a process's pipes, or a fake's handler), and what its lines mean. A transport
 * only moves requests out and lines back; everything else (one request at a time, timeouts, attribution, death,
 * the close sequence) is `ExtensionCore`'s, so process-backed and fake extensions behave alike by construction.
 */

/** Every failure that kills an extension (`ExtensionDead` is what later requests get). */
export type DeathError = Exclude<ExtensionError, ExtensionDead>

export interface Transport {
  /**
   * Write one request's bytes now, synchronously: the core calls it in the same step that makes the request the
   * one in flight. Never fails: a broken pipe shows up as an exit or a timeout.
   */
  readonly write: <E extends EventName>(request: EncodedRequest<E>) => void
  /**
   * Call `then` once every byte the extension wrote before this call has been read and reported through `read`
   * (a process: after the event loop's next poll, `PollBarrier`); the core writes the request in `then`. So bytes
   * written before a request existed cannot be its reply, however late the event loop would have delivered them.
   * A transport with nothing in between (a fake) calls `then` at once. Not called when the extension's `reply_ids`
   * is "required": then no such line can pass for a reply anyway.
   */
  readonly catchUp: (then: () => void) => void
  /** After a death: stop the extension now (a process: SIGTERM its group, SIGKILL after the grace). */
  readonly terminate: Effect.Effect<void>
  /** At scope close while alive: stop it gracefully (close stdin, wait a grace, then terminate). */
  readonly close: Effect.Effect<void>
  readonly pid: number | undefined
  readonly stderrTail: Effect.Effect<string>
}

/** What a transport reports to the core, synchronously, from where it reads. */
export interface TransportEvents {
  /** The complete non-blank lines of one read, in order (possibly from a fake: one reply). */
  readonly read: (lines: ReadonlyArray<ReadLine>) => void
  /** A failure found by the transport (exit, a line too long, …): the extension dies. */
  readonly fail: (error: DeathError) => void
}

/** A transport with nothing behind it: what an extension that never started has. */
export const deadTransport: Transport = {
  write: () => undefined,
  catchUp: (then) => then(),
  terminate: Effect.void,
  close: Effect.void,
  pid: undefined,
  stderrTail: Effect.succeed("")
}

/** The request whose reply is due: the one written last, still unanswered. */
export interface Due {
  readonly event: EventName
  readonly id: string
}

/**
 * The host's request ids are short tokens (decimal counters: IdCounter; an embedder's own, such as "c2"): an `id`
 * that looks like one is shown as it is, what could be content is not.
 */
const isHostId = (s: string): boolean => /^[A-Za-z0-9_.:-]{1,16}$/.test(s)

/**
 * A line the extension wrote where no reply was due, by its shape: its strings by their length only (protocol's
 * `shapeJson`), but for its own `id` when it looks like the host's. Such a line may echo anything the extension
 * saw, and the death cause reaches the audit, the log and the model's notes.
 */
const describeLine = (line: ReadLine): string =>
  line._tag === "Json"
    ? shapeJson(line.value, 200, (key, s) => key === "id" && isHostId(s))
    : line._tag === "Invalid"
      ? `(${line.got}, ${line.bytes} bytes)`
      : `more than ${line.count - 1} blank lines in a row`

/** A reply's `id` for the mismatch message: as it is when it looks like the host's, else by its shape. */
export const showId = (id: unknown): string =>
  typeof id === "string" && isHostId(id) ? JSON.stringify(id) : shapeJson(id, 60)

/**
 * Why a read with more lines than replies due is out of step, naming the stray line rather than the reply: the one
 * that carries the request's id is its reply, so the stray is another; without ids, the first (a banner, a debug
 * print, an earlier stray reply: whatever came before the reply). A stray carrying another id says so.
 */
const describeStray = (lines: ReadonlyArray<ReadLine>, due: Due | undefined): string => {
  const reply =
    due === undefined ? -1 : lines.findIndex((line) => line._tag === "Json" && replyIdOf(line.value) === due.id)
  const stray = lines[reply === 0 ? 1 : 0]
  if (stray === undefined) return ""
  const id = stray._tag === "Json" ? replyIdOf(stray.value) : undefined
  return due !== undefined && id !== undefined && id !== due.id
    ? `reply to id ${showId(id)} while ${showId(due.id)} was in flight`
    : describeLine(stray)
}

/**
 * Attribution (docs/design.md#failures): the lines of one (non-empty) read belong to the request due when they were
 * read. Returns why they cannot be its reply (the extension is out of step and dies; no line of the read is
 * applied), or undefined when the read is one JSON line that answers `due`.
 */
export const outOfStep = (
  extension: string,
  lines: ReadonlyArray<ReadLine>,
  due: Due | undefined,
  idsRequired: boolean
): DeathError | undefined => {
  // Blank lines without end (the reader's bound passed): out of step whatever is due. The reader reports them as
  // the last line of a read, and reads nothing after them: only the last line can be one.
  const last = lines[lines.length - 1]
  if (last?._tag === "Blanks") return new UnsolicitedOutput({ extension, line: describeLine(last) })
  // More lines than requests in flight.
  if (due === undefined || lines.length > 1)
    return new UnsolicitedOutput({ extension, line: describeStray(lines, due) })
  const line = lines[0]
  if (line === undefined || line._tag === "Blanks") return undefined
  if (line._tag === "Invalid") {
    return new MalformedReply({ event: due.event, path: "", expected: "one JSON object per line", got: line.got })
  }
  const id = replyIdOf(line.value)
  if (id !== undefined && id !== due.id) {
    return new UnsolicitedOutput({ extension, line: `reply to id ${showId(id)} while ${showId(due.id)} was in flight` })
  }
  if (id === undefined && idsRequired) {
    return new MalformedReply({
      event: due.event,
      path: "id",
      expected: `the request's id ${showId(due.id)} (reply_ids is "required")`,
      got: "nothing"
    })
  }
  return undefined
}

/** A reply's JSON decoded for its event. A throw of the decoder is a defect: not the extension's failure. */
export const decode = <E extends EventName>(event: E, json: unknown): Exit.Exit<DecodedReply<E>, MalformedReply> => {
  let decoded: Result.Result<DecodedReply<E>, MalformedReply>
  try {
    decoded = decodeReply(event, json)
  } catch (defect) {
    return Exit.die(defect)
  }
  return Result.isSuccess(decoded) ? Exit.succeed(decoded.success) : Exit.fail(decoded.failure)
}
