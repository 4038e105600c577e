import { HostMetrics, Telemetry } from "@abhed/host"
import { Effect, Metric } from "effect"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { noop } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import { configOf, startHost } from "../HostSide.ts"
import { latencyRows, type Row, row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { hostToolCall, sessionId } from "./ToolCall.ts"

/**
 * 12. OpenTelemetry export on against off: two hosts over one no-op extension each, interleaved in one loop, one of
 * them exporting every span, metric and audit record (OTLP/HTTP protobuf) to a receiver in a process of its own
 * (as a collector is). Budget: p50 ratio ≤ 1.1 (exporting must not slow a dispatch). Then this process's CPU time
 * per dispatch, on against off, in alternating blocks: on a shared machine the wall time of either side moves by
 * more than exporting costs, CPU time much less (it counts the export's own work too: encoding, HTTP).
 */

// A receiver that reads each request and answers 200, in its own process: it prints its port, then serves.
const receiverScript = `
const http = require("node:http")
const server = http.createServer((req, res) => { req.resume(); req.on("end", () => { res.statusCode = 200; res.end("{}") }) })
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`

/** Per side, the median over blocks of this process's CPU time (user + system) per dispatch, in µs. */
const cpuPerDispatch = async (
  sides: Record<"on" | "off", () => Promise<unknown>>,
  blocks: number,
  perBlock: number
) => {
  const readings: Record<"on" | "off", Array<number>> = { on: [], off: [] }
  for (let b = 0; b <= blocks; b++) {
    for (const key of b % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const)) {
      const before = process.cpuUsage()
      for (let i = 0; i < perBlock; i++) await sides[key]()
      const used = process.cpuUsage(before)
      if (b > 0) readings[key].push((used.user + used.system) / perBlock)
    }
  }
  const median = (xs: Array<number>) => summarize(xs).p50
  return { on: median(readings.on), off: median(readings.off) }
}

const startReceiver = async () => {
  const child = spawn(process.execPath, ["-e", receiverScript], { stdio: ["ignore", "pipe", "inherit"] })
  const lines = createInterface({ input: child.stdout })
  const port = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve)
    child.once("exit", (code) => reject(new Error(`the OTLP receiver exited (${code})`)))
  })
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() }
}

export const telemetry: Scenario = {
  title: "12. OpenTelemetry export on vs off",
  run: async (plan, progress) => {
    const receiver = await startReceiver()
    try {
      const off = await startHost(configOf(1, noop), sessionId)
      try {
        const on = await startHost(configOf(1, noop), sessionId, Telemetry.layer(Telemetry.forEndpoint(receiver.url)))
        try {
          progress(`1 no-op extension, export on vs off, ${plan.dispatch.iterations} dispatches per side`)
          const s = await interleave({ on: timed(hostToolCall(on)), off: timed(hostToolCall(off)) }, plan.dispatch)
          // 250 dispatches a block: about two batches of spans, so each block pays its share of the export.
          const cpu = await cpuPerDispatch(
            { on: hostToolCall(on), off: hostToolCall(off) },
            Math.max(4, Math.round(plan.dispatch.iterations / 250)),
            250
          )
          const droppedOf = (signal: string) =>
            Effect.map(Metric.value(Metric.withAttributes(HostMetrics.telemetryDropped, { signal })), (v) =>
              Number(v.count)
            )
          const dropped = await on.run(
            Effect.map(Effect.all(["traces", "metrics", "logs"].map(droppedOf)), (counts) =>
              counts.reduce((a, b) => a + b, 0)
            )
          )
          const rows: Array<Row> = [
            ...latencyRows(
              "12. tool_call, 1 no-op ext, OTLP export on (host col) vs off (raw col)",
              summarize(s.on),
              summarize(s.off),
              1.1
            ),
            row({
              name: "12. host process CPU per dispatch, export on (host col) vs off (raw col)",
              metric: "cpu p50",
              host: cpu.on,
              raw: cpu.off,
              budget: null,
              unit: "µs"
            }),
            row({
              name: "12. telemetry items dropped during the run (export on)",
              metric: "count",
              host: Number(dropped),
              raw: 0,
              budget: null,
              unit: "items"
            })
          ]
          return rows
        } finally {
          await on.dispose()
        }
      } finally {
        await off.dispose()
      }
    } finally {
      receiver.stop()
    }
  }
}
