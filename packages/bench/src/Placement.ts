import { execFileSync } from "node:child_process"
import type { ExtensionCommand } from "./ExtensionFiles.ts"

/**
 * Where the extension processes run relative to the agent's main thread, pinned with `taskset` (util-linux).
 *
 * Why: on a small VM a pipe round trip is bimodal with placement. Measured on the 2-core machine of
 * docs/benchmarks.md, the raw client's round trip to one no-op is ~22–28 µs when the extension shares the
 * client's core (a write wakes it on the same core, no inter-processor wake-up) and ~96–106 µs when it runs on
 * the other core (the wake-up of a halted vCPU, both ways). Left to the kernel, each process lands in one mode or
 * the other for a whole loop, and the host's processes and the raw client's need not land alike: one run showed a
 * host/raw ratio of 3.36 for the same code that gives 1.05–1.20 otherwise. Pinned, both sides run their processes
 * in the same place and the ratio says what the host costs.
 *
 * Only the main thread of this process is pinned (its thread id is its pid; the garbage collector's and libuv's
 * threads stay free), and only while a pinned measurement runs; its affinity is put back afterwards.
 */
export interface Placement {
  /** For row names: "on another core", "on the agent's core". */
  readonly label: string
  /** The CPU the agent's main thread runs on. */
  readonly agentCpu: number
  /** The CPU the extension processes run on. */
  readonly extensionCpu: number
}

const affinityOf = (pid: number): string | undefined => {
  try {
    // "pid 11250's current affinity list: 0,1"
    const out = execFileSync("taskset", ["-p", "-c", String(pid)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    })
    return /list:\s*(\S+)/.exec(out)?.[1]
  } catch {
    return undefined
  }
}

/** "0-2,5" → [0, 1, 2, 5]. */
export const cpuList = (list: string): ReadonlyArray<number> =>
  list.split(",").flatMap((part) => {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part.trim())
    if (range === null) return []
    const from = Number(range[1])
    const last = range[2] === undefined ? from : Number(range[2])
    return Array.from({ length: Math.max(0, last - from + 1) }, (_, i) => from + i)
  })

const original = affinityOf(process.pid)

/**
 * The two placements this machine can pin (another core, the agent's core), or none: no `taskset`, or fewer
 * than two CPUs this process may use. Then the rows are measured as the kernel places the processes.
 */
export const placements: ReadonlyArray<Placement> = (() => {
  const cpus = original === undefined ? [] : cpuList(original)
  const [agentCpu, otherCpu] = cpus
  if (agentCpu === undefined || otherCpu === undefined) return []
  return [
    { label: "on another core", agentCpu, extensionCpu: otherCpu },
    { label: "on the agent's core", agentCpu, extensionCpu: agentCpu }
  ]
})()

/** `command` run under `taskset -c <cpu>` (which execs it: the process is the extension, no shim stays). */
export const pinnedCommand = (command: ExtensionCommand, placement: Placement): ExtensionCommand => ({
  ...command,
  command: "taskset",
  args: ["-c", String(placement.extensionCpu), command.command, ...command.args]
})

const setAffinity = (list: string) => {
  execFileSync("taskset", ["-p", "-c", list, String(process.pid)], { stdio: "ignore" })
}

/** Run `body` with this process's main thread on `placement.agentCpu`; its affinity is restored afterwards. */
export const withAgentOn = async <A>(placement: Placement, body: () => Promise<A>): Promise<A> => {
  setAffinity(String(placement.agentCpu))
  try {
    return await body()
  } finally {
    if (original !== undefined) setAffinity(original)
  }
}

/**
 * Measured in each of `which` placements (default: every one), or once, as the kernel places the processes, where
 * none can be pinned (`placement` undefined). `where` is the placement for row names ("" unpinned).
 */
export const placed = async <A>(
  run: (
    command: (base: ExtensionCommand) => ExtensionCommand,
    where: string,
    placement: Placement | undefined
  ) => Promise<A>,
  which: ReadonlyArray<Placement> = placements
): Promise<ReadonlyArray<A>> => {
  if (which.length === 0) return [await run((base) => base, "", undefined)]
  const results: Array<A> = []
  for (const p of which)
    results.push(await withAgentOn(p, () => run((base) => pinnedCommand(base, p), ` ${p.label}`, p)))
  return results
}
