import { nsToMs } from "./Stats.ts"

/**
 * The measurement loop. Sides of one scenario (host, raw, ...) run interleaved in one process, one iteration of
 * each in turn, rotating which goes first, so drift (thermal, GC, a neighbour's load) hits every side alike.
 */

/** One side of a scenario: runs one iteration and returns its own measurement in ms (see `timed`). */
export type Side = () => Promise<number>
export type Sides<K extends string> = { readonly [key in K]: Side }
export type Samples<K extends string> = { readonly [key in K]: ReadonlyArray<number> }

export interface InterleaveOptions {
  /** Iterations run first and thrown away (JIT, caches, first-use allocations). */
  readonly warmup: number
  readonly iterations: number
}

/** Wall time of one call, in milliseconds, from `process.hrtime.bigint()`. */
export const time = async (run: () => Promise<unknown>): Promise<number> => {
  const start = process.hrtime.bigint()
  await run()
  return nsToMs(process.hrtime.bigint() - start)
}

/** A side measured by wall time, start to end. Sides with untimed setup or teardown measure themselves. */
export const timed =
  (run: () => Promise<unknown>): Side =>
  () =>
    time(run)

/**
 * `interleave` with each side run `block` iterations in a row before the next side's turn: what a side leaves to run
 * in the background (a host's export) is paid inside its own block, not in the other side's iterations.
 */
export const interleaveBlocks = async <K extends string>(
  sides: Sides<K>,
  options: InterleaveOptions,
  block: number
): Promise<Samples<K>> => {
  // Object.keys loses the key type; the keys are exactly the record's own keys, which are K.
  const keys = Object.keys(sides) as Array<K>
  const samples = new Map<K, Array<number>>(keys.map((k) => [k, []]))
  const rounds = Math.ceil((options.warmup + options.iterations) / block)
  for (let i = 0; i < rounds; i++) {
    for (const key of rotation(keys, i)) {
      for (let j = 0; j < block; j++) {
        const ms = await sides[key]()
        if (i * block + j >= options.warmup) samples.get(key)?.push(ms)
      }
    }
  }
  // Sound: every key of `sides` is filled in by the loop below, before the object is returned.
  const result = {} as { [key in K]: ReadonlyArray<number> }
  for (const key of keys) result[key] = samples.get(key) ?? []
  return result
}

/** The order the sides run in on iteration `i`: rotated by one each iteration. */
export const rotation = <K extends string>(keys: ReadonlyArray<K>, i: number): ReadonlyArray<K> =>
  keys.length === 0 ? [] : keys.map((_, j) => keys[(i + j) % keys.length]).filter((k): k is K => k !== undefined)

/** One iteration of each side in turn, rotating which goes first: `interleaveBlocks` with blocks of one. */
export const interleave = <K extends string>(sides: Sides<K>, options: InterleaveOptions): Promise<Samples<K>> =>
  interleaveBlocks(sides, options, 1)
