/**
 * A text shown in a report, cut to `max` characters from char `from` (0-based), saying when it was cut how long it
 * was and where the part shown starts: a huge text shown whole floods the report, and cut silently it reads as the
 * whole. Pure.
 */
export const excerpt = (text: string, max: number, from = 0): string => {
  if (text.length <= max && from === 0) return text
  const part = text.slice(from, from + max)
  return (
    `${from > 0 ? "…" : ""}${part}${from + max < text.length ? "…" : ""} ` +
    `(${text.length} chars${from > 0 ? `, from char ${from + 1}` : ""})`
  )
}

/**
 * Two texts shown side by side (what was expected and what came, before and after), each cut to `max` characters
 * around where they first differ: cut from their starts, two long texts that differ only past the cut would read the
 * same, and shown whole, a huge one floods the report. Pure.
 */
export const excerpts = (a: string, b: string, max: number): readonly [string, string] => {
  if (a.length <= max && b.length <= max) return [a, b]
  let differs = 0
  while (differs < a.length && differs < b.length && a[differs] === b[differs]) differs++
  // A little of what comes before the difference, for context; from the start when the difference is early.
  const start = differs < max / 2 ? 0 : differs - 40
  return [excerpt(a, max, start), excerpt(b, max, start)]
}
