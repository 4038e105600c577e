import { Effect } from "effect"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { noop } from "../ExtensionFiles.ts"
import { configOf, startHost } from "../HostSide.ts"
import { type Usage, usage } from "../ProcessUsage.ts"
import { row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { sessionId, toolArgs } from "./ToolCall.ts"

const count = (n: number) => (n % 1000 === 0 ? `${n / 1000}k` : String(n))

const rawMemory = fileURLToPath(new URL("../RawMemory.ts", import.meta.url))

/** The raw client's usage after `total` dispatches, from a process of its own (RSS is per process). */
const rawUsage = (total: number): Promise<Usage> =>
  new Promise((resolve, reject) =>
    execFile(process.execPath, [rawMemory, String(total)], { maxBuffer: 1024 * 1024 }, (error, stdout) => {
      if (error !== null) return reject(error)
      const parsed: unknown = JSON.parse(stdout.trim())
      const field = (key: keyof Usage): number => {
        const value: unknown = typeof parsed === "object" && parsed !== null ? Reflect.get(parsed, key) : undefined
        return typeof value === "number" ? value : Number.NaN
      }
      resolve({ rss_mib: field("rss_mib"), heap_used_mib: field("heap_used_mib"), open_fds: field("open_fds") })
    })
  )

/**
 * 5. Host memory over many dispatches to 4 no-op extensions: RSS, heap after GC and open fds after `first`
 * and after `total` dispatches (budget: flat within 10%, ratio ≤ 1.1). Host only: RSS and fds belong to the
 * whole process, so there is no raw side to interleave. In these rows the raw column holds the host's own
 * reading after `first` dispatches, and the ratio is the growth from there to `total`. One more row compares the
 * host's RSS after `total` with the raw client's after as many dispatches, run as a process of its own
 * (`RawMemory.ts`, after the host has finished: budget ≤ 2×, issue 8).
 */
export const memory: Scenario = {
  title: "5. memory over many dispatches",
  run: async (plan, progress) => {
    const { first, total } = plan.memory
    progress(`4 extensions, readings after ${count(first)} and ${count(total)} dispatches`)
    const host = await startHost(configOf(4, noop), sessionId)
    // Sequential dispatches, 1000 per runPromise: the loop's own bookkeeping stays out of the readings.
    const dispatchMany = (n: number) =>
      host.run(Effect.gen(function*() {
        for (let i = 0; i < n; i++) yield* host.host.toolCall({ tool: "bash", args: toolArgs })
      }))
    const runUpTo = async (from: number, to: number) => {
      for (let done = from; done < to; done += 1000) await dispatchMany(Math.min(1000, to - done))
    }
    try {
      await runUpTo(0, first)
      const atFirst = usage()
      progress(`after ${count(first)}: rss ${atFirst.rss_mib.toFixed(1)} MiB, ${atFirst.open_fds} fds`)
      await runUpTo(first, total)
      const atTotal = usage()
      progress(`after ${count(total)}: rss ${atTotal.rss_mib.toFixed(1)} MiB, ${atTotal.open_fds} fds`)
      const name = `5. host after ${count(total)} vs after ${count(first)} dispatches, 4 no-op ext`
      progress(`raw client in a process of its own, ${count(total)} dispatches`)
      const raw = await rawUsage(total)
      progress(`raw client after ${count(total)}: rss ${raw.rss_mib.toFixed(1)} MiB`)
      return [
        row({
          name: `5. host vs raw client (own process) after ${count(total)} dispatches, 4 no-op ext`,
          metric: "rss",
          host: atTotal.rss_mib,
          raw: raw.rss_mib,
          budget: 2,
          unit: "MiB"
        }),
        row({ name, metric: "rss", host: atTotal.rss_mib, raw: atFirst.rss_mib, budget: 1.1, unit: "MiB" }),
        row({ name, metric: "heap used after GC", host: atTotal.heap_used_mib, raw: atFirst.heap_used_mib, budget: 1.1, unit: "MiB" }),
        row({ name, metric: "open fds", host: atTotal.open_fds, raw: atFirst.open_fds, budget: 1.1, unit: "fds" })
      ]
    } finally {
      await host.dispose()
    }
  }
}
