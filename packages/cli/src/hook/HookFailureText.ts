import { FailedTextMax } from "@abhed/protocol/ReplyCheck"

/**
 * What is said of a hook run that failed (HookOutcome.ts): in our reply, only our account of the run and the first
 * line of the hook's stderr, bounded; on our stderr, the whole of it.
 */

/** How much of the first line of a failed hook's stderr goes into a reply: enough to name the problem. */
const FailureLineChars = 200

/**
 * The first non-empty line of stderr, trimmed and cut to `FailureLineChars`, as `: line` (or ""). Only the hook's
 * own words and our account of the run go into a reply, never the call's args or content: a reply is kept in the
 * audit record and repeated in the host's log, and a hook that fails on a secret should not copy it there.
 */
export const firstLine = (stderr: string): string => {
  const line = stderr
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "")
  if (line === undefined) return ""
  return `: ${line.length > FailureLineChars ? `${line.slice(0, FailureLineChars)}…` : line}`
}

/** The end of stderr (at most 2000 characters), as `: text` (or ""): for our own stderr, never a reply. */
export const tail = (stderr: string): string => {
  const t = stderr.trim()
  return t === "" ? "" : `: ${t.length > 2000 ? `…${t.slice(-2000)}` : t}`
}

/** A failed run's `failed` text: `hook failed: summary`, cut to `FailedTextMax` (ending in `…`). */
export const failedWhy = (summary: string): string => {
  const why = `hook failed: ${summary}`
  return why.length > FailedTextMax ? `${why.slice(0, FailedTextMax - 1)}…` : why
}
