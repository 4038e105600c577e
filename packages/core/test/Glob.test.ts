import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { globMatch } from "../src/Glob.ts"

/** Reference matcher: dynamic programming over code points (obviously correct, O(n·m)). */
const reference = (pattern: string, text: string): boolean => {
  type Tok = { readonly k: "lit"; readonly c: string } | { readonly k: "any" } | { readonly k: "star" }
  const toks: Array<Tok> = []
  const p = Array.from(pattern)
  for (let i = 0; i < p.length; i++) {
    const c = p[i] ?? ""
    if (c === "\\") toks.push({ k: "lit", c: p[++i] ?? "\\" })
    else if (c === "*") toks.push({ k: "star" })
    else if (c === "?") toks.push({ k: "any" })
    else toks.push({ k: "lit", c })
  }
  const t = Array.from(text)
  // dp[j] = toks[0..i) matches t[0..j)
  let dp = t.map(() => false)
  dp = [true, ...dp]
  for (const tok of toks) {
    const next = dp.map(() => false)
    for (let j = 0; j <= t.length; j++) {
      if (tok.k === "star") next[j] = (dp[j] ?? false) || (j > 0 && (next[j - 1] ?? false))
      else if (j > 0) next[j] = (dp[j - 1] ?? false) && (tok.k === "any" || tok.c === t[j - 1])
    }
    dp = next
  }
  return dp[t.length] ?? false
}

describe("globMatch", () => {
  it("* crosses slashes and spaces (unlike path globs)", () => {
    expect(globMatch("rm -rf *", "rm -rf /tmp/x y")).toBe(true)
    expect(globMatch("*secret*", "/home/me/.secret/key")).toBe(true)
    expect(globMatch("*", "")).toBe(true)
    expect(globMatch("a*", "a")).toBe(true)
  })
  it("whole-string match", () => {
    expect(globMatch("rm", "rm -rf /")).toBe(false)
    expect(globMatch("rm*", "sudo rm -rf /")).toBe(false)
    expect(globMatch("", "")).toBe(true)
    expect(globMatch("", "x")).toBe(false)
  })
  it("? matches exactly one character, including an astral one", () => {
    expect(globMatch("a?c", "abc")).toBe(true)
    expect(globMatch("a?c", "ac")).toBe(false)
    expect(globMatch("a?c", "abbc")).toBe(false)
    expect(globMatch("a?c", "a😀c")).toBe(true)
  })
  it("backslash escapes; a trailing backslash is literal", () => {
    expect(globMatch("a\\*", "a*")).toBe(true)
    expect(globMatch("a\\*", "ab")).toBe(false)
    expect(globMatch("\\?", "?")).toBe(true)
    expect(globMatch("\\?", "x")).toBe(false)
    expect(globMatch("a\\\\b", "a\\b")).toBe(true)
    expect(globMatch("a\\", "a\\")).toBe(true)
    expect(globMatch("\\a", "a")).toBe(true)
  })
  it("regex metacharacters are literal", () => {
    expect(globMatch("a.b", "a.b")).toBe(true)
    expect(globMatch("a.b", "axb")).toBe(false)
    expect(globMatch("[ab]+(c)|^$", "[ab]+(c)|^$")).toBe(true)
    expect(globMatch("[ab]", "a")).toBe(false)
  })
  it("first and last segments must not overlap", () => {
    expect(globMatch("ab*ba", "aba")).toBe(false)
    expect(globMatch("ab*ba", "abba")).toBe(true)
  })
  it("pathological patterns finish fast (no catastrophic backtracking)", () => {
    const text = "a".repeat(200_000)
    const started = performance.now()
    expect(globMatch("*a*a*a*a*a*b", text)).toBe(false)
    expect(globMatch("*a*a*a*a*a*b*", text)).toBe(false)
    expect(globMatch("*a*a*a*a*a*", text)).toBe(true)
    expect(globMatch("*?a*a?*a*a*a*", text)).toBe(true)
    // A backtracking matcher needs ~n^5 steps here; a few hundred ms is ample for ours even on a loaded machine.
    expect(performance.now() - started).toBeLessThan(2000)
  })
  it("agrees with a reference matcher", () => {
    const alphabet = fc.constantFrom("a", "b", "/", " ", "😀")
    const patternChar = fc.constantFrom("a", "b", "/", " ", "😀", "*", "?", "\\")
    fc.assert(
      fc.property(fc.array(patternChar, { maxLength: 8 }), fc.array(alphabet, { maxLength: 10 }), (p, t) => {
        const pattern = p.join("")
        const text = t.join("")
        expect(globMatch(pattern, text)).toBe(reference(pattern, text))
      }),
      { numRuns: 1000 }
    )
  })
  it("agrees with the reference on patterns without `?` (matched on the string) and on lone surrogates", () => {
    // High and low halves of 😀, alone and paired: a literal must never match half a pair.
    const alphabet = fc.constantFrom("a", "b", "😀", "\uD83D", "\uDE00", "\uDE01")
    const patternChar = fc.constantFrom("a", "b", "😀", "\uD83D", "\uDE00", "*", "*", "\\", "?")
    fc.assert(
      fc.property(fc.array(patternChar, { maxLength: 8 }), fc.array(alphabet, { maxLength: 10 }), (p, t) => {
        const pattern = p.join("")
        const text = t.join("")
        expect(globMatch(pattern, text)).toBe(reference(pattern, text))
      }),
      { numRuns: 2000 }
    )
  })
})
