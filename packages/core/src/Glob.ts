/**
 * String globs for policy rules: `*` matches any run of characters, INCLUDING "/" and spaces; `?` matches one
 * character (a Unicode code point); `\` escapes the next character (a trailing `\` is a literal backslash);
 * everything else is literal. The whole string must match.
 *
 * Why not effect's Glob module: it is path-segment based (`*` stops at "/"), which is wrong here: a rule like
 * `{"command": "rm -rf *"}` must match `rm -rf /tmp/x`.
 *
 * Why not a regex: a translated regex like /^.*a.*a.*b$/ backtracks catastrophically on long inputs. Instead the
 * pattern is split at its stars into segments; the first segment must match at the start, the last at the end,
 * and each middle one at its leftmost position after the previous (greedy leftmost is correct when segments
 * are separated by stars). Cost is at most O(text × pattern), with no backtracking across segments.
 */

type Unit = string | typeof AnyChar // a code point to match literally, or `?`
const AnyChar: unique symbol = Symbol("?")

interface Compiled {
  /** Segments between stars; `starred` = the pattern has at least one star. */
  readonly segments: ReadonlyArray<ReadonlyArray<Unit>>
  readonly starred: boolean
  /**
   * The same segments as strings, when the pattern has no `?` and is well-formed UTF-16 (no lone surrogate): then
   * matching code points equals matching UTF-16 code units (a well-formed literal cannot start or end inside a
   * surrogate pair), so the text need not be split into code points. The common case for policy rules and
   * matchers, which run on every call: `"git push*"`, `"bash"`.
   */
  readonly literal: ReadonlyArray<string> | undefined
}

const compile = (pattern: string): Compiled => {
  const cps = Array.from(pattern)
  const segments: Array<Array<Unit>> = [[]]
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i] ?? ""
    const current = segments[segments.length - 1] ?? []
    if (c === "\\") {
      const next = cps[i + 1]
      current.push(next ?? "\\")
      i++
    } else if (c === "*") {
      segments.push([])
    } else if (c === "?") {
      current.push(AnyChar)
    } else {
      current.push(c)
    }
  }
  const literal =
    segments.every((segment) => segment.every((u) => u !== AnyChar)) && pattern.isWellFormed()
      ? segments.map((segment) => segment.join(""))
      : undefined
  return { segments, starred: segments.length > 1, literal }
}

const matchesAt = (segment: ReadonlyArray<Unit>, text: ReadonlyArray<string>, at: number): boolean => {
  for (let j = 0; j < segment.length; j++) {
    const u = segment[j]
    if (u !== AnyChar && u !== text[at + j]) return false
  }
  return true
}

/** Leftmost position in [from, to - segment.length] where `segment` matches, or -1. */
const find = (segment: ReadonlyArray<Unit>, text: ReadonlyArray<string>, from: number, to: number): number => {
  for (let at = from; at + segment.length <= to; at++) if (matchesAt(segment, text, at)) return at
  return -1
}

/** `run` for a pattern without `?`: the same leftmost-greedy walk, on the string itself. */
const runLiteral = (segments: ReadonlyArray<string>, text: string): boolean => {
  const first = segments[0] ?? ""
  if (segments.length === 1) return text === first
  const last = segments[segments.length - 1] ?? ""
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false
  let pos = first.length
  const end = text.length - last.length
  for (let s = 1; s < segments.length - 1; s++) {
    const segment = segments[s] ?? ""
    const at = text.indexOf(segment, pos)
    if (at === -1 || at + segment.length > end) return false
    pos = at + segment.length
  }
  return true
}

const run = (compiled: Compiled, text: string): boolean => {
  if (compiled.literal !== undefined) return runLiteral(compiled.literal, text)
  const t = Array.from(text)
  const { segments } = compiled
  const first = segments[0] ?? []
  if (!compiled.starred) return t.length === first.length && matchesAt(first, t, 0)
  const last = segments[segments.length - 1] ?? []
  // The first and last segments are anchored and must not overlap.
  if (t.length < first.length + last.length) return false
  if (!matchesAt(first, t, 0) || !matchesAt(last, t, t.length - last.length)) return false
  let pos = first.length
  const end = t.length - last.length
  for (let s = 1; s < segments.length - 1; s++) {
    const segment = segments[s] ?? []
    const at = find(segment, t, pos, end)
    if (at === -1) return false
    pos = at + segment.length
  }
  return true
}

// Patterns come from the operator's policy: few and reused, so compile each once. Bounded anyway, in case a
// caller feeds generated patterns.
const cache = new Map<string, Compiled>()
const CacheLimit = 4096

const compiled = (pattern: string): Compiled => {
  const hit = cache.get(pattern)
  if (hit !== undefined) return hit
  const c = compile(pattern)
  if (cache.size >= CacheLimit) cache.clear()
  cache.set(pattern, c)
  return c
}

export const globMatch = (pattern: string, text: string): boolean => run(compiled(pattern), text)
