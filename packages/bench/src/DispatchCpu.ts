import { readFileSync } from "node:fs"
import { noop, noopIds } from "./ExtensionFiles.ts"
import { withSides } from "./Sides.ts"
import { percentile } from "./Stats.ts"
import { hostToolCall, rawToolCall } from "./scenarios/ToolCall.ts"

/**
 * Scenario 1 seen from the bench process: `node packages/bench/src/DispatchCpu.ts N [--ids]` runs sequential
 * tool_call dispatches to N no-op processes (`--ids`: id-echoing no-ops, `reply_ids: "required"`), host and raw in
 * alternating blocks of 500 (11 blocks, the first thrown away), and prints per side the median of the blocks' p50
 * wall time, the CPU time of this process per dispatch (`process.cpuUsage`: all its threads, so the garbage
 * collector's helpers too), and its context switches per dispatch. Not a budget row; for comparing host changes.
 */
const count = Number(process.argv[2] ?? 8)
if (!Number.isInteger(count) || count < 1)
  throw new Error(`DispatchCpu: expected a number of extensions, got ${process.argv[2]}`)
const command = process.argv.includes("--ids") ? noopIds : noop
const blocks = 10
const perBlock = 500
const median = (xs: ReadonlyArray<number>) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50
  )
const switches = (): [number, number] => {
  const status = readFileSync("/proc/self/status", "utf8")
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN)
  return [field("voluntary_ctxt_switches"), field("nonvoluntary_ctxt_switches")]
}
interface Readings {
  readonly p50: Array<number>
  readonly cpu: Array<number>
  readonly voluntary: Array<number>
  readonly involuntary: Array<number>
}
const empty = (): Readings => ({ p50: [], cpu: [], voluntary: [], involuntary: [] })
await withSides({ count, command }, [{ count, command }], async (host, [raw = []]) => {
  const sides = { host: hostToolCall(host), raw: rawToolCall(raw) }
  const readings = { host: empty(), raw: empty() }
  for (let b = 0; b <= blocks; b++) {
    for (const key of b % 2 === 0 ? (["host", "raw"] as const) : (["raw", "host"] as const)) {
      const times: Array<number> = []
      const [v0, i0] = switches()
      const cpu0 = process.cpuUsage()
      for (let i = 0; i < perBlock; i++) {
        const t0 = process.hrtime.bigint()
        await sides[key]()
        times.push(Number(process.hrtime.bigint() - t0) / 1000)
      }
      const cpu = process.cpuUsage(cpu0)
      const [v1, i1] = switches()
      if (b === 0) continue // warm-up
      const r = readings[key]
      r.p50.push(median(times))
      r.cpu.push((cpu.user + cpu.system) / perBlock)
      r.voluntary.push((v1 - v0) / perBlock)
      r.involuntary.push((i1 - i0) / perBlock)
    }
  }
  const line = (key: "host" | "raw") => {
    const r = readings[key]
    return `${key}: p50 ${median(r.p50).toFixed(1)} µs, CPU ${median(r.cpu).toFixed(1)} µs, switches ${median(r.voluntary).toFixed(2)} + ${median(r.involuntary).toFixed(2)} involuntary`
  }
  process.stdout.write(
    `${count} ${command === noopIds ? "id-echoing " : ""}no-op ext, per dispatch\n  ${line("host")}\n  ${line("raw")}\n  p50 ratio ${(median(readings.host.p50) / median(readings.raw.p50)).toFixed(3)}\n`
  )
})
