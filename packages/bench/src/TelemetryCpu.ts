import { Telemetry } from "@abhed/host"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { noop } from "./ExtensionFiles.ts"
import { configOf, type HostHandle, startHost } from "./HostSide.ts"
import { percentile } from "./Stats.ts"
import { hostToolCall, sessionId } from "./scenarios/ToolCall.ts"

/**
 * Scenario 12 seen as CPU: `node packages/bench/src/TelemetryCpu.ts [SIDES...]` starts hosts over one no-op
 * extension each, in this process: `off` (no telemetry), `on` (OTLP/HTTP protobuf to a receiver of its own
 * process), `held` (the same, with sends held back: a 600 s interval and batches no run fills, so nothing is
 * encoded or sent during the run). Blocks of 250 sequential tool_calls alternate between the sides (rotating
 * which goes first); prints per side the median and quartiles of this process's CPU time (user + system) per
 * dispatch, the median of the blocks' p50 wall time, the mean time in the garbage collector per dispatch (wall
 * time of `gc` performance entries), and per side its ratio to `off`, median over rounds. `--blocks N`,
 * `--per-block N`; `--series` prints every block's CPU; `--profile` writes a CPU profile of the measured blocks
 * (not the start-up) to `telemetry-cpu-<sides>.cpuprofile`. Not a budget row: for finding what export costs.
 */
const receiverScript = `
const http = require("node:http")
const server = http.createServer((req, res) => { req.resume(); req.on("end", () => { res.statusCode = 200; res.end("{}") }) })
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`
const given = process.argv
  .slice(2)
  .filter((a, i, all) => !a.startsWith("--") && !/^\d+$/.test(a) && !(all[i - 1] ?? "").startsWith("--"))
const names = given.length > 0 ? given : ["off", "on", "held"]
const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at < 0 ? fallback : Number(process.argv[at + 1])
}
const blocks = flag("blocks", 20)
const perBlock = flag("per-block", 250)

const child = spawn(process.execPath, ["-e", receiverScript], { stdio: ["ignore", "pipe", "inherit"] })
const port = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve))
const url = `http://127.0.0.1:${port}`
const layerOf = (name: string) => {
  if (name === "off") return undefined
  if (name === "on") return Telemetry.layer(Telemetry.forEndpoint(url))
  if (name === "held")
    return Telemetry.layer(Telemetry.forEndpoint(url, { intervalMillis: 600_000, maxBatchSize: 10_000_000 }))
  throw new Error(`TelemetryCpu: unknown side ${name}`)
}
const hosts: Array<HostHandle> = []
for (const name of names) {
  const layer = layerOf(name)
  hosts.push(await startHost(configOf(1, noop), sessionId, layer))
}
process.stderr.write("hosts up\n")
const calls = hosts.map(hostToolCall)
const { PerformanceObserver } = await import("node:perf_hooks")
let gcNow = 0
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcNow += e.duration
})
gcObserver.observe({ entryTypes: ["gc"] })
const gc: Array<Array<number>> = names.map(() => [])
const cpu: Array<Array<number>> = names.map(() => [])
const p50: Array<Array<number>> = names.map(() => [])
const q = (xs: ReadonlyArray<number>, p: number) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    p
  )
const profile = process.argv.includes("--profile") ? new (await import("node:inspector/promises")).Session() : undefined
for (let b = 0; b <= blocks; b++) {
  if (b === 1 && profile !== undefined) {
    profile.connect()
    await profile.post("Profiler.setSamplingInterval", { interval: 100 })
    await profile.post("Profiler.enable")
    await profile.post("Profiler.start")
  }
  for (let j = 0; j < names.length; j++) {
    const i = (b + j) % names.length
    const call = calls[i]
    if (call === undefined) continue
    const times: Array<number> = []
    const before = process.cpuUsage()
    const gc0 = gcNow
    for (let k = 0; k < perBlock; k++) {
      const t0 = process.hrtime.bigint()
      await call()
      times.push(Number(process.hrtime.bigint() - t0) / 1000)
    }
    const used = process.cpuUsage(before)
    await new Promise((resolve) => setImmediate(resolve))
    if (b > 0) {
      gc[i]?.push(((gcNow - gc0) * 1000) / perBlock)
      cpu[i]?.push((used.user + used.system) / perBlock)
      p50[i]?.push(q(times, 50))
    }
  }
}
if (profile !== undefined) {
  const { profile: data } = await profile.post("Profiler.stop")
  const { writeFileSync } = await import("node:fs")
  writeFileSync(`telemetry-cpu-${names.join("-")}.cpuprofile`, JSON.stringify(data))
}
if (process.argv.includes("--series"))
  for (const [i, name] of names.entries())
    process.stdout.write(`${name}: ${(cpu[i] ?? []).map((x) => x.toFixed(0)).join(" ")}\n`)
const off = names.indexOf("off")
const lines = names.map((name, i) => {
  const c = cpu[i] ?? []
  const ratio =
    off < 0 || off === i
      ? ""
      : `, CPU/off ${q(
          c.map((x, k) => x / (cpu[off]?.[k] ?? Number.NaN)),
          50
        ).toFixed(3)}, p50/off ${q(
          (p50[i] ?? []).map((x, k) => x / (p50[off]?.[k] ?? Number.NaN)),
          50
        ).toFixed(3)}`
  return `${name}: CPU ${q(c, 50).toFixed(1)} µs (${q(c, 25).toFixed(1)} – ${q(c, 75).toFixed(1)}), p50 ${q(p50[i] ?? [], 50).toFixed(1)} µs, GC mean ${((gc[i] ?? []).reduce((a, b) => a + b, 0) / (gc[i]?.length ?? 1)).toFixed(1)} µs${ratio}`
})
process.stdout.write(`${lines.join("\n")}\n`)
for (const h of hosts) await h.dispose()
child.kill()
