import { HostMetrics, Telemetry } from "@abhed/host"
import { Effect, Metric } from "effect"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { type ExtensionCommand, noop } from "../ExtensionFiles.ts"
import { interleave, interleaveBlocks, timed } from "../Harness.ts"
import { placed, placements } from "../Placement.ts"
import type { Plan } from "../Plan.ts"
import { configOf, startHost } from "../HostSide.ts"
import { latencyRows, type Row, row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { hostToolCall, sessionId } from "./ToolCall.ts"

/**
 * 12. OpenTelemetry export on against off: two hosts over one no-op extension each, in one loop, one of them
 * exporting every span, metric and audit record (OTLP/HTTP protobuf) to a receiver in a process of its own (as a
 * collector is). Measured three ways:
 * - Alternating the sides on every dispatch (the budget row): p50 ratio ≤ 1.1, judged where the processes can be
 *   pinned in each placement (Placement.ts), as scenario 1 is. What each side leaves to run in the background (the
 *   export's writing and sending, the work after a decision) may run during the other side's next dispatch.
 * - Back to back, in blocks of `Block` dispatches a side: the export's whole work paid inside its own side's blocks.
 *   What a host saturated with dispatches pays; no budget (docs/benchmarks.md, scenario 12).
 * - This process's CPU time per dispatch, on against off, in alternating blocks (the export's own work included).
 */

/** The dispatches a side runs in a row in the back-to-back row. */
const Block = 100

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

/** The budget of the p50 ratio: exporting must not slow a dispatch. */
const Budget = 1.1

/** Items the exporting host dropped so far (it should drop none). */
const droppedOf = (on: Awaited<ReturnType<typeof startHost>>) =>
  on.run(
    Effect.map(
      Effect.all(
        ["traces", "metrics", "logs"].map((signal) =>
          Effect.map(Metric.value(Metric.withAttributes(HostMetrics.telemetryDropped, { signal })), (v) =>
            Number(v.count)
          )
        )
      ),
      (counts) => counts.reduce((a, b) => a + b, 0)
    )
  )

/** One host exporting and one not, each over one `command` no-op; `saturated`: back to back and CPU too. */
const measure = async (
  command: ExtensionCommand,
  where: string,
  budget: number | null,
  receiverUrl: string,
  plan: Plan,
  progress: (message: string) => void,
  saturated: boolean
) => {
  const off = await startHost(configOf(1, command), sessionId)
  try {
    const on = await startHost(configOf(1, command), sessionId, Telemetry.layer(Telemetry.forEndpoint(receiverUrl)))
    try {
      // The count is the process's (effect's default metric registry): what this run adds to it.
      const droppedBefore = await droppedOf(on)
      progress(`1 no-op extension${where}, export on vs off, ${plan.dispatch.iterations} dispatches per side`)
      const s = await interleave({ on: timed(hostToolCall(on)), off: timed(hostToolCall(off)) }, plan.dispatch)
      const rows: Array<Row> = latencyRows(
        `12. tool_call, 1 no-op ext${where}, OTLP export on (host col) vs off (raw col)`,
        summarize(s.on),
        summarize(s.off),
        budget
      )
      if (saturated) {
        progress(
          `1 no-op extension${where}, export on vs off, back to back, ${plan.dispatch.iterations} dispatches per side`
        )
        const b = await interleaveBlocks(
          { on: timed(hostToolCall(on)), off: timed(hostToolCall(off)) },
          plan.dispatch,
          Block
        )
        rows.push(
          ...latencyRows(
            `12. tool_call, 1 no-op ext${where}, back to back in blocks of ${Block}, OTLP export on (host col) vs off (raw col)`,
            summarize(b.on),
            summarize(b.off),
            null
          )
        )
        // 250 dispatches a block: about two batches of spans, so each block pays its share of the export.
        const used = await cpuPerDispatch(
          { on: hostToolCall(on), off: hostToolCall(off) },
          Math.max(4, Math.round(plan.dispatch.iterations / 250)),
          250
        )
        rows.push(
          row({
            name: `12. host process CPU per dispatch${where}, export on (host col) vs off (raw col)`,
            metric: "cpu p50",
            host: used.on,
            raw: used.off,
            budget: null,
            unit: "µs"
          })
        )
      }
      return { rows, dropped: (await droppedOf(on)) - droppedBefore }
    } finally {
      await on.dispose()
    }
  } finally {
    await off.dispose()
  }
}

export const telemetry: Scenario = {
  title: "12. OpenTelemetry export on vs off",
  run: async (plan, progress) => {
    const receiver = await startReceiver()
    try {
      // As the kernel places the processes, then (where it can) pinned in each placement, as scenario 1: on a small
      // VM a pipe round trip is bimodal with placement (Placement.ts), and the two hosts' extensions need not land
      // alike, which moved this ratio by ±0.08 between runs of the same code. The budget is judged on the pinned rows.
      const pinned = placements.length > 0
      const results = [
        await measure(
          noop,
          pinned ? ", placed by the kernel" : "",
          pinned ? null : Budget,
          receiver.url,
          plan,
          progress,
          true
        ),
        ...(pinned
          ? await placed((command, where) => measure(command(noop), where, Budget, receiver.url, plan, progress, false))
          : [])
      ]
      const dropped = results.reduce((total, r) => total + r.dropped, 0)
      return [
        ...results.flatMap((r) => r.rows),
        row({
          name: "12. telemetry items dropped during the run (export on)",
          metric: "count",
          host: dropped,
          raw: 0,
          budget: null,
          unit: "items"
        })
      ]
    } finally {
      receiver.stop()
    }
  }
}
