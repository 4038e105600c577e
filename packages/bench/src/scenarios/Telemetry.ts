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
 * (as a collector is). Budget: p50 ratio ≤ 1.1 (exporting must not slow a dispatch).
 */

// A receiver that reads each request and answers 200, in its own process: it prints its port, then serves.
const receiverScript = `
const http = require("node:http")
const server = http.createServer((req, res) => { req.resume(); req.on("end", () => { res.statusCode = 200; res.end("{}") }) })
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`

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
