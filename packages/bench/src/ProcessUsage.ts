import { readdirSync } from "node:fs"
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/**
 * What this process holds: resident memory, live heap after a full GC, open file descriptors. Read between
 * dispatches for scenario 5.
 */
export interface Usage {
  readonly rss_mib: number
  readonly heap_used_mib: number
  /** Entries of /proc/self/fd; NaN where there is no /proc (not Linux). */
  readonly open_fds: number
  /**
   * The size of V8's young generation (`new_space`): V8 grows it on its own, by a heuristic of bytes that survive
   * its scavenges (docs/benchmarks.md), and each growth shows in the RSS. NaN if V8 does not report it.
   */
  readonly new_space_mib: number
}

/**
 * A full GC, so a reading measures what is retained, not what is waiting to be collected. `--expose-gc` cannot be
 * passed through `pnpm bench`, so it is switched on at run time and `gc` taken from a fresh context.
 */
const collect = (): void => {
  setFlagsFromString("--expose-gc")
  const gc: unknown = runInNewContext("gc")
  if (typeof gc === "function") gc()
}

const countFds = (): number => {
  try {
    return readdirSync("/proc/self/fd").length
  } catch {
    return Number.NaN
  }
}

const mib = (bytes: number) => bytes / 1024 / 1024

export const usage = (): Usage => {
  collect()
  const memory = process.memoryUsage()
  const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === "new_space")
  return {
    rss_mib: mib(memory.rss),
    heap_used_mib: mib(memory.heapUsed),
    open_fds: countFds(),
    new_space_mib: newSpace === undefined ? Number.NaN : mib(newSpace.space_size)
  }
}
