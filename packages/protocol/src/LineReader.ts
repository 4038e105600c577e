/**
 * Cuts an extension's stdout into reply lines synchronously, one read at a time (docs/design.md#attribution, §6).
 *
 * The host attributes each complete line to the request in flight at the moment its bytes were read, so the
 * lines of a read must be known inside the read callback itself: a Stream decoder hands them to whichever fiber
 * runs next, which is exactly the late attribution §4 forbids. The limits and causes are those of effect's
 * `Ndjson.decode` with `ignoreEmptyLines` (the codec everywhere attribution is not at stake), and a property test
 * checks that both agree on every split of the same bytes: `\n`, `\r\n` and a bare `\r` end a line, a leading
 * UTF-8 BOM is skipped, empty lines are ignored, a line longer than `maxLineBytes` (terminator excluded) is
 * rejected as soon as the limit is passed, and a line that is not UTF-8 or not JSON is reported as such.
 *
 * Empty lines are ignored up to a bound (`maxBlankLines` in a row, when given): a trailing `print()` is a common
 * slip, but an extension that prints blank lines without end would cost the host a little for each, forever.
 */

/**
 * One complete, non-empty line: its JSON value, or why it is not one. `text` is the decoded line, kept only when
 * the reader was asked to (`keepText`: the conformance check reports lines as they were written; the host never
 * needs it).
 */
export type ReadLine =
  | { readonly _tag: "Json"; readonly value: unknown; readonly text?: string }
  /** `bytes`: the line's length in bytes, terminator excluded (its shape, for a cause that must not quote it). */
  | {
      readonly _tag: "Invalid"
      readonly got: "invalid UTF-8" | "invalid JSON"
      readonly bytes: number
      readonly text?: string
    }
  /** More than `maxBlankLines` empty lines in a row (`count` of them): the last line the reader gives. No text. */
  | { readonly _tag: "Blanks"; readonly count: number; readonly text?: undefined }

export interface ReadResult {
  /** The lines this read completed, in order (possibly none). */
  readonly lines: ReadonlyArray<ReadLine>
  /** A line passed `maxLineBytes`: nothing more is read from this reader. */
  readonly tooLong: boolean
}

export interface LineReader {
  /** Feed the bytes of one read. */
  readonly read: (chunk: Uint8Array) => ReadResult
}

const LF = 0x0a
const CR = 0x0d
const noLines: ReadResult = { lines: [], tooLong: false }
const stopped: ReadResult = { lines: [], tooLong: true }

export const makeLineReader = (options: {
  readonly maxLineBytes: number
  readonly keepText?: boolean
  /** How many empty lines in a row are ignored; one more ends the reading with a `Blanks` line. Default: no bound. */
  readonly maxBlankLines?: number | undefined
}): LineReader => {
  const max = options.maxLineBytes
  const keepText = options.keepText === true
  const maxBlank = options.maxBlankLines ?? Number.POSITIVE_INFINITY
  let blanks = 0 // empty lines since the last line that was not
  // The first line may start with a BOM, which the first decoder strips (as Ndjson's does).
  let decoder = new TextDecoder("utf-8", { fatal: true })
  const rest = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
  let pending: Array<Uint8Array> = []
  let pendingBytes = 0
  let afterCR = false
  let broken = false
  /** Too many blank lines: nothing more is read, and nothing more is reported. */
  let quiet = false

  const take = (chunk: Uint8Array, start: number, end: number): Uint8Array => {
    if (pendingBytes === 0) return chunk.subarray(start, end)
    const line = new Uint8Array(pendingBytes + end - start)
    let offset = 0
    for (const bytes of pending) {
      line.set(bytes, offset)
      offset += bytes.length
    }
    line.set(chunk.subarray(start, end), offset)
    pending = []
    pendingBytes = 0
    return line
  }

  const decode = (bytes: Uint8Array, out: Array<ReadLine>) => {
    let text: string
    try {
      text = decoder.decode(bytes)
    } catch {
      decoder = rest
      blanks = 0
      out.push({ _tag: "Invalid", got: "invalid UTF-8", bytes: bytes.length })
      return
    }
    decoder = rest
    if (text.length === 0) {
      if (++blanks > maxBlank) {
        quiet = true
        out.push({ _tag: "Blanks", count: blanks })
      }
      return
    }
    blanks = 0
    try {
      const value: unknown = JSON.parse(text)
      out.push(keepText ? { _tag: "Json", value, text } : { _tag: "Json", value })
    } catch {
      out.push(
        keepText
          ? { _tag: "Invalid", got: "invalid JSON", bytes: bytes.length, text }
          : { _tag: "Invalid", got: "invalid JSON", bytes: bytes.length }
      )
    }
  }

  return {
    read: (chunk) => {
      if (broken) return stopped
      if (quiet) return noLines
      let out: Array<ReadLine> | undefined
      let start = 0
      // Terminators are found with indexOf (native), not byte by byte: a 16 MiB reply is a few scans.
      let nextLF = chunk.indexOf(LF)
      let nextCR = chunk.indexOf(CR)
      while (nextLF !== -1 || nextCR !== -1) {
        const i = nextCR === -1 || (nextLF !== -1 && nextLF < nextCR) ? nextLF : nextCR
        if (chunk[i] === LF) nextLF = chunk.indexOf(LF, i + 1)
        else nextCR = chunk.indexOf(CR, i + 1)
        const previousIsCR = i > 0 ? chunk[i - 1] === CR : afterCR
        if (chunk[i] === LF && previousIsCR) {
          start = i + 1 // the \n of a \r\n: the line ended at the \r
          continue
        }
        if (pendingBytes + i - start > max) {
          broken = true
          return { lines: out ?? [], tooLong: true }
        }
        out ??= []
        decode(take(chunk, start, i), out)
        if (quiet) return { lines: out, tooLong: false }
        start = i + 1
      }
      if (chunk.length > 0) afterCR = chunk[chunk.length - 1] === CR
      if (start < chunk.length) {
        if (pendingBytes + chunk.length - start > max) {
          broken = true
          return { lines: out ?? [], tooLong: true }
        }
        // Copied: the caller may reuse its buffer.
        pending.push(chunk.slice(start))
        pendingBytes += chunk.length - start
      }
      return out === undefined ? noLines : { lines: out, tooLong: false }
    }
  }
}
