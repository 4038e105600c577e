/**
 * Ids made once per dispatch or round (`"1"`, `"c-1"`, ...): a counter's next value as a decimal string.
 *
 * Not `String(n)` or `${n}`: V8 keeps every string it makes from a number in its number-to-string cache, so the
 * string made on each dispatch outlived the young generation's collections and was promoted to the old one. That
 * was most of what survived each scavenge (about 40 of 55 bytes per dispatch), and enough for V8 to double its young
 * generation, and the host's RSS with it, some 70k dispatches in (docs/benchmarks.md, "Memory").
 * `toFixed(0)` gives the same digits for any counter below 1e21 and does not go through the cache.
 */
export const make = (prefix = ""): (() => string) => {
  let n = 0
  return () => `${prefix}${(++n).toFixed(0)}`
}
