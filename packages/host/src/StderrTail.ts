/**
 * What the host keeps of an extension's stderr (docs/design.md#failures): the last 64 KiB for status and diagnostics,
 * and the lines to forward to the logger. Memory is bounded whatever the extension writes: the tail is a fixed ring and
 * a line longer than `maxLineBytes` is cut into pieces. (`Stream.splitLines` would buffer an endless line whole,
 * which is why stderr is split here rather than with it.)
 */

import { printable } from "./Printable.ts"

export const DefaultTailBytes = 64 * 1024
export const DefaultMaxLogLineBytes = 8 * 1024

const LF = 0x0a
const CR = 0x0d

export interface StderrTail {
  /** Take one chunk; returns the complete lines (without terminators) it finished, in order. */
  readonly push: (chunk: Uint8Array) => ReadonlyArray<string>
  /** The last `tailBytes` bytes seen, as text (a character cut at the start is dropped). */
  readonly tail: () => string
  /** The unterminated last line, if any, so it is not lost when the stream ends. */
  readonly flush: () => ReadonlyArray<string>
}

export const make = (options?: { readonly tailBytes?: number; readonly maxLineBytes?: number }): StderrTail => {
  const tailBytes = options?.tailBytes ?? DefaultTailBytes
  const maxLineBytes = options?.maxLineBytes ?? DefaultMaxLogLineBytes
  const ring = new Uint8Array(tailBytes)
  let ringEnd = 0 // next write position
  let ringLength = 0
  const line = new Uint8Array(maxLineBytes)
  let lineLength = 0
  const decoder = new TextDecoder("utf-8", { fatal: false })

  const remember = (chunk: Uint8Array): void => {
    const bytes = chunk.length > tailBytes ? chunk.subarray(chunk.length - tailBytes) : chunk
    const first = Math.min(bytes.length, tailBytes - ringEnd)
    ring.set(bytes.subarray(0, first), ringEnd)
    ring.set(bytes.subarray(first), 0)
    ringEnd = (ringEnd + bytes.length) % tailBytes
    ringLength = Math.min(tailBytes, ringLength + bytes.length)
  }

  let afterCR = false // "\r\n" is one terminator, even split across chunks

  const takeLine = (out: Array<string>): void => {
    if (lineLength > 0) out.push(decoder.decode(line.subarray(0, lineLength))) // blank lines are not logged
    lineLength = 0
  }

  const appendPiece = (chunk: Uint8Array, from: number, to: number, out: Array<string>): void => {
    let at = from
    while (at < to) {
      const n = Math.min(to - at, maxLineBytes - lineLength)
      line.set(chunk.subarray(at, at + n), lineLength)
      lineLength += n
      at += n
      if (lineLength === maxLineBytes) takeLine(out) // an over-long line is logged in pieces
    }
  }

  return {
    push: (chunk) => {
      if (tailBytes > 0) remember(chunk)
      const out: Array<string> = []
      let start = 0
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i]
        if (byte === LF || byte === CR) {
          appendPiece(chunk, start, i, out)
          if (!(byte === LF && afterCR)) takeLine(out)
          start = i + 1
          afterCR = byte === CR
        } else {
          afterCR = false
        }
      }
      appendPiece(chunk, start, chunk.length, out)
      return out
    },
    tail: () => {
      const start = (ringEnd - ringLength + tailBytes) % tailBytes
      const bytes = new Uint8Array(ringLength)
      const first = Math.min(ringLength, tailBytes - start)
      bytes.set(ring.subarray(start, start + first), 0)
      bytes.set(ring.subarray(0, ringLength - first), first)
      // Skip UTF-8 continuation bytes: the ring may start in the middle of a character.
      let skip = 0
      while (skip < bytes.length && skip < 3 && ((bytes[skip] ?? 0) & 0xc0) === 0x80) skip++
      return new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(skip))
    },
    flush: () => {
      const out: Array<string> = []
      if (lineLength > 0) takeLine(out)
      return out
    }
  }
}

/** The longest error line a death cause carries, in characters (what is cut ends in "…"). */
export const MaxErrorLineChars = 200

// A line that names an error: Python's last traceback line (`ModuleNotFoundError: No module named 'x'`,
// `json.decoder.JSONDecodeError: …`, `KeyboardInterrupt`), Node's (`SyntaxError: Cannot use import statement…`,
// `Error [ERR_MODULE_NOT_FOUND]: …`, `Uncaught TypeError: …`).
const ErrorLine = /^(?:Uncaught\s+)?(?:[A-Za-z_$][\w$.]*)?(?:Error|Exception|Interrupt)(?:\s*\[[^\]]*\])?(?::|$)/
// Lines that never explain anything on their own: stack frames (`    at f (file:1:2)`, `  File "x.py", line 3`),
// indented source and its `^^^` marker, Node's closing `Node.js v24.1.0`.
const Noise = /^\s|^\^+$|^Node\.js v\d/

// Escaped as everywhere an extension's text is shown (Printable.ts), then cut.
const escapeLine = (line: string, max: number): string => {
  const escaped = printable(line)
  return escaped.length > max ? `${escaped.slice(0, max - 1)}…` : escaped
}

/**
 * The line of an extension's stderr that says why it died, for its death cause: the last line that names an error
 * (not a stack frame: Python prints the error after its traceback, Node before its stack), else the last line that
 * is not a frame or indented source, else the last line. Control and invisible characters are escaped (`\u001b`)
 * and the line is cut to `max` characters. Undefined when stderr has nothing but blank lines.
 */
export const errorLine = (tail: string, max: number = MaxErrorLineChars): string | undefined => {
  // Colour codes (CSI sequences) are formatting, not text: dropped, so a coloured `Error:` is still found.
  const lines = tail
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, "")
    .split(/\r\n|\r|\n/)
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "")
  const pick = lines.findLast((l) => ErrorLine.test(l)) ?? lines.findLast((l) => !Noise.test(l)) ?? lines.at(-1)
  return pick === undefined ? undefined : escapeLine(`${oldNodeHint(lines)}${pick.trim()}`, max)
}

// A Node older than 22.18 runs no .ts file, and says so without naming the version it would take.
const UnknownTsExtension = /ERR_UNKNOWN_FILE_EXTENSION\]?: Unknown file extension "\.[cm]?ts"/

/** Before the error line of a `.ts` extension started by too old a Node: the Node it needs, and the one it got. */
const oldNodeHint = (lines: ReadonlyArray<string>): string => {
  if (!lines.some((l) => UnknownTsExtension.test(l))) return ""
  const version = lines.findLast((l) => /^Node\.js v\d/.test(l))
  return `a .ts extension needs Node 24 on PATH${version === undefined ? "" : ` (this is ${version})`}: `
}
