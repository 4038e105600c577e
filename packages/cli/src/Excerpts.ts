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
  const cut = (text: string): string => {
    if (text.length <= max && start === 0) return text
    const part = text.slice(start, start + max)
    return (
      `${start > 0 ? "…" : ""}${part}${start + max < text.length ? "…" : ""} ` +
      `(${text.length} chars${start > 0 ? `, from char ${start + 1}` : ""})`
    )
  }
  return [cut(a), cut(b)]
}
