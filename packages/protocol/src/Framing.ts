import * as Stream from "effect/Stream"
import * as Ndjson from "effect/encoding/Ndjson"

/**
 * Line framing for the wire protocol: effect's own NDJSON codec with our defaults. We never split lines by hand.
 */

/** The longest reply line the host accepts (docs/design.md#failures: `reply_too_long`). */
export const DefaultMaxLineBytes = 16 * 1024 * 1024

/**
 * How many empty lines in a row the host ignores from an extension. A few are a common slip (a trailing `print()`);
 * without end they cost the host a little each, forever: past this bound they are unsolicited output.
 */
export const MaxBlankLines = 1000

export interface DecodeOptions {
  /** Longest accepted line in UTF-8 bytes, terminator excluded. Default 16 MiB. */
  readonly maxLineBytes?: number | undefined
}

export type FramingError = Ndjson.NdjsonError
export const isFramingError = Ndjson.isNdjsonError

/** Bytes → one JSON value per line. Blank lines are skipped; `\n`, `\r\n` and `\r` end a line. */
export const decodeChannel = <IE = never, Done = unknown>(options?: DecodeOptions) =>
  Ndjson.decode<IE, Done>({
    ignoreEmptyLines: true,
    maxLineBytes: options?.maxLineBytes ?? DefaultMaxLineBytes
  })

/**
 * A byte stream as a stream of JSON values. Fails with `NdjsonError` (`LineTooLarge`, `InvalidUtf8`, `InvalidJson`).
 */
export const decodeStream = <E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  options?: DecodeOptions
): Stream.Stream<unknown, E | Ndjson.NdjsonError, R> => Stream.pipeThroughChannel(bytes, decodeChannel<E>(options))

/** A stream of JSON values as NDJSON bytes. */
export const encodeStream = <A, E, R>(
  values: Stream.Stream<A, E, R>
): Stream.Stream<Uint8Array, E | Ndjson.NdjsonError, R> => Stream.pipeThroughChannel(values, Ndjson.encode<E>())

/**
 * One value as one NDJSON line. The host encodes each request once and writes these same bytes to every
 * subscriber. `JSON.stringify` escapes newlines inside strings, so the result is always exactly one line.
 *
 * `Buffer.from`, not `TextEncoder`: the same UTF-8 bytes, but a small line is cut from Node's buffer pool instead of
 * getting a fresh backing store of its own (measured 1.1-1.2 -> 0.6 us for a tool_call request; this runs once per
 * round of every dispatch).
 */
export const encodeLine = (value: unknown): Uint8Array => Buffer.from(`${JSON.stringify(value)}\n`, "utf8")

/** Why a decoder rejected a line (`LineTooLarge`, `InvalidUtf8`, `InvalidJson`), or undefined for other errors. */
export const framingReason = (error: unknown): Ndjson.NdjsonErrorReason | undefined =>
  Ndjson.isNdjsonError(error) ? error.reason : undefined
