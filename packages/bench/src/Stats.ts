/**
 * Summary statistics over timing samples. Pure: the harness collects samples, this file only reads them.
 */

export interface Summary {
  readonly count: number
  readonly p50: number
  readonly p99: number
  readonly mean: number
  readonly min: number
  readonly max: number
}

/**
 * The p-th percentile (0 ≤ p ≤ 100) of ascending `sorted` samples, nearest-rank: the smallest sample such that at
 * least p% of the samples are ≤ it. Nearest-rank always returns a real sample (no interpolation), so a p99 over
 * few samples is the worst one rather than a value nobody measured.
 */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.ceil((Math.min(Math.max(p, 0), 100) / 100) * sorted.length)
  return sorted[Math.max(rank, 1) - 1] ?? Number.NaN
}

export const summarize = (samples: ReadonlyArray<number>): Summary => {
  const sorted = [...samples].sort((a, b) => a - b)
  let total = 0
  for (const s of sorted) total += s
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length === 0 ? Number.NaN : total / sorted.length,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN
  }
}

/** host/raw; null when it has no meaning (a missing or zero baseline). */
export const ratio = (host: number, raw: number): number | null =>
  Number.isFinite(host) && Number.isFinite(raw) && raw !== 0 ? host / raw : null

/** Nanoseconds (from `process.hrtime.bigint()`) as milliseconds. */
export const nsToMs = (ns: bigint): number => Number(ns) / 1e6
