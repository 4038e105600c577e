import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { Usage } from "../ProcessUsage.ts"
import { row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"

const count = (n: number) => (n % 1000 === 0 ? `${n / 1000}k` : String(n))

const hostMemory = fileURLToPath(new URL("../HostMemory.ts", import.meta.url))
const rawMemory = fileURLToPath(new URL("../RawMemory.ts", import.meta.url))

/** Run `script` with `args` as a process of its own and parse the one JSON line it prints. */
const runOwnProcess = (script: string, args: ReadonlyArray<string>): Promise<unknown> =>
  new Promise((resolve, reject) =>
    execFile(process.execPath, [script, ...args], { maxBuffer: 1024 * 1024 }, (error, stdout) => {
      if (error !== null) return reject(error)
      try {
        resolve(JSON.parse(stdout.trim()))
      } catch (cause) {
        reject(new Error(`${script} printed ${JSON.stringify(stdout)}, not one JSON line`, { cause }))
      }
    })
  )

const field = (parsed: unknown, key: string): unknown =>
  typeof parsed === "object" && parsed !== null ? Reflect.get(parsed, key) : undefined

const usageOf = (parsed: unknown): Usage => {
  const number = (key: keyof Usage): number => {
    const value = field(parsed, key)
    return typeof value === "number" ? value : Number.NaN
  }
  return {
    rss_mib: number("rss_mib"),
    heap_used_mib: number("heap_used_mib"),
    open_fds: number("open_fds"),
    new_space_mib: number("new_space_mib")
  }
}

/**
 * 5. Host memory over many dispatches to 4 no-op extensions. Both sides run as processes of their own, one
 * after the other, each doing only this (RSS and fds belong to the whole process, and the bench's own process
 * carries what earlier scenarios left): `HostMemory.ts` makes `total` dispatches through the host and prints its
 * usage after `first` and after `total`; `RawMemory.ts` makes `total` dispatches with the raw client and prints
 * its usage. One row compares the host's RSS after `total` with the raw client's (budget ≤ 2×, issue 8). In the
 * growth rows the raw column holds the host's own reading after `first`, and the ratio is the growth from there
 * to `total` (budget: flat within 10%, ≤ 1.1). The last row, without a budget, is V8's young generation at both
 * readings: when it has grown, the RSS has grown by about as much (docs/benchmarks.md, "Memory").
 */
export const memory: Scenario = {
  title: "5. memory over many dispatches",
  run: async (plan, progress) => {
    const { first, total } = plan.memory
    progress(
      `host in a process of its own, 4 extensions, readings after ${count(first)} and ${count(total)} dispatches`
    )
    const hostReadings = await runOwnProcess(hostMemory, [String(first), String(total)])
    const atFirst = usageOf(field(hostReadings, "first"))
    const atTotal = usageOf(field(hostReadings, "total"))
    progress(`host after ${count(first)}: rss ${atFirst.rss_mib.toFixed(1)} MiB, ${atFirst.open_fds} fds`)
    progress(`host after ${count(total)}: rss ${atTotal.rss_mib.toFixed(1)} MiB, ${atTotal.open_fds} fds`)
    progress(`raw client in a process of its own, ${count(total)} dispatches`)
    const raw = usageOf(await runOwnProcess(rawMemory, [String(total)]))
    progress(`raw client after ${count(total)}: rss ${raw.rss_mib.toFixed(1)} MiB`)
    const name = `5. host after ${count(total)} vs after ${count(first)} dispatches, 4 no-op ext`
    return [
      row({
        name: `5. host vs raw client (each its own process) after ${count(total)} dispatches, 4 no-op ext`,
        metric: "rss",
        host: atTotal.rss_mib,
        raw: raw.rss_mib,
        budget: 2,
        unit: "MiB"
      }),
      row({ name, metric: "rss", host: atTotal.rss_mib, raw: atFirst.rss_mib, budget: 1.1, unit: "MiB" }),
      row({
        name,
        metric: "heap used after GC",
        host: atTotal.heap_used_mib,
        raw: atFirst.heap_used_mib,
        budget: 1.1,
        unit: "MiB"
      }),
      row({ name, metric: "open fds", host: atTotal.open_fds, raw: atFirst.open_fds, budget: 1.1, unit: "fds" }),
      // No budget: V8's own sizing of its young generation, which explains an RSS step when it grows.
      row({
        name,
        metric: "V8 young generation",
        host: atTotal.new_space_mib,
        raw: atFirst.new_space_mib,
        budget: null,
        unit: "MiB"
      })
    ]
  }
}
