import { Telemetry } from "@abhed/host"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { pathToFileURL } from "node:url"
import { noop } from "./ExtensionFiles.ts"
import { configOf, startHost } from "./HostSide.ts"
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
 *
 * `--fakes`: each host over one in-process fake instead (no process, no pipe: the host's and the export's own CPU
 * alone), and with `--against DIR` the checkout at DIR's sides too (`A.off`, `A.on`, …; this tree's are `B.…`),
 * loaded into this process and rotating with this tree's; then per checkout the export's CPU a dispatch (on − off
 * per round, median and quartiles). Each block's CPU then includes 5 ms after it (the export's trailing turns).
 */
const receiverScript = `
const http = require("node:http")
const server = http.createServer((req, res) => { req.resume(); req.on("end", () => { res.statusCode = 200; res.end("{}") }) })
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`
const valued = ["--blocks", "--per-block", "--against"]
const given = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !valued.includes(all[i - 1] ?? ""))
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
const settingsOf = (name: string) => {
  if (name === "on") return Telemetry.forEndpoint(url)
  if (name === "held") return Telemetry.forEndpoint(url, { intervalMillis: 600_000, maxBatchSize: 10_000_000 })
  if (name === "off") return undefined
  throw new Error(`TelemetryCpu: unknown side ${name}`)
}
/** A side over one in-process fake of the checkout at `root` (its own host and effect). */
const fakeSide = async (root: string, name: string) => {
  const host = (await import(
    pathToFileURL(join(root, "packages/host/src/index.ts")).href
  )) as typeof import("@abhed/host")
  const effect = (await import(
    pathToFileURL(join(root, "packages/host/node_modules/effect/dist/index.js")).href
  )) as typeof import("effect")
  const { Effect, Exit, Layer, Scope } = effect
  const scope = Effect.runSync(Scope.make())
  const settings = settingsOf(name)
  const context = await Effect.runPromise(
    Layer.buildWithScope(settings === undefined ? Layer.empty : host.Telemetry.layer(settings), scope)
  )
  const made = await Effect.runPromise(
    Effect.gen(function* () {
      const fake = yield* host.FakeExtension.make("noop", () => Effect.succeed({}))
      return yield* host.ExtensionHost.make([fake], { sessionId })
    }).pipe(Effect.provide(host.AuditLog.layerNone), Effect.provide(context), Scope.provide(scope))
  )
  const call = Effect.provide(made.toolCall({ tool: "bash", args: { command: "git status --short" } }), context)
  return { call: () => Effect.runPromise(call), dispose: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
const againstAt = process.argv.indexOf("--against")
const checkouts: ReadonlyArray<readonly [string, string]> = [
  ...(againstAt < 0 ? [] : [["A", process.argv[againstAt + 1] ?? ""] as const]),
  ["B", join(import.meta.dirname, "../../..")]
]
const sides: Array<{
  readonly label: string
  readonly call: () => Promise<unknown>
  readonly dispose: () => Promise<void>
}> = []
const fakes = process.argv.includes("--fakes")
if (fakes)
  for (const [label, root] of checkouts)
    for (const name of names) sides.push({ label: `${label}.${name}`, ...(await fakeSide(root, name)) })
else
  for (const name of names) {
    const settings = settingsOf(name)
    const h = await startHost(
      configOf(1, noop),
      sessionId,
      settings === undefined ? undefined : Telemetry.layer(settings)
    )
    sides.push({ label: name, call: hostToolCall(h), dispose: h.dispose })
  }
process.stderr.write("hosts up\n")
const labels = sides.map((side) => side.label)
const calls = sides.map((side) => side.call)
const { PerformanceObserver } = await import("node:perf_hooks")
let gcNow = 0
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcNow += e.duration
})
gcObserver.observe({ entryTypes: ["gc"] })
const gc: Array<Array<number>> = labels.map(() => [])
const cpu: Array<Array<number>> = labels.map(() => [])
const p50: Array<Array<number>> = labels.map(() => [])
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
  for (let j = 0; j < labels.length; j++) {
    const i = (b + j) % labels.length
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
    // Over fakes, the export's turns that trail the block (a batch sent, its answer) are the block's own: idle time
    // costs no CPU, and they would otherwise land in the next side's block.
    if (fakes) await new Promise((resolve) => setTimeout(resolve, 5))
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
  for (const [i, name] of labels.entries())
    process.stdout.write(`${name}: ${(cpu[i] ?? []).map((x) => x.toFixed(0)).join(" ")}\n`)
/** The side without export of the same checkout. */
const offOf = (label: string) => labels.indexOf(label.includes(".") ? `${label.split(".")[0]}.off` : "off")
const lines = labels.map((name, i) => {
  const off = offOf(name)
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
// The export's own CPU a dispatch, per round against the same checkout's `off`.
for (const [i, name] of labels.entries()) {
  const off = offOf(name)
  if (off < 0 || off === i) continue
  const d = (cpu[i] ?? []).map((x, k) => x - (cpu[off]?.[k] ?? Number.NaN))
  process.stdout.write(`${name} − off: ${q(d, 50).toFixed(1)} µs (${q(d, 25).toFixed(1)} – ${q(d, 75).toFixed(1)})\n`)
}
for (const side of sides) await side.dispose()
child.kill()
