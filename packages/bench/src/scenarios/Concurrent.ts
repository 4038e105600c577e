import { Effect } from "effect"
import { noop } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import { row } from "../Report.ts"
import { withSides } from "../Sides.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { rawToolCall, toolArgs } from "./ToolCall.ts"

/**
 * 7. Batches of 64 concurrent tool_call dispatches over 4 no-op extensions: throughput against raw. Both sides
 * keep one request in flight per extension (the protocol's order matching), so a batch is 64 rounds per
 * extension either way. No budget; ratio = host/raw throughput (higher is better here).
 */
export const concurrent: Scenario = {
  title: "7. concurrent dispatches",
  run: async (plan, progress) => {
    const k = plan.inFlight
    progress(`${k} in flight over 4 extensions, ${plan.concurrent.iterations} batches per side`)
    const batch = Array.from({ length: k }, (_, i) => i)
    const samples = await withSides({ count: 4, command: noop }, [{ count: 4, command: noop }], (host, [raw = []]) => {
      const hostBatch = Effect.forEach(batch, () => host.host.toolCall({ tool: "bash", args: toolArgs }), {
        concurrency: "unbounded"
      })
      const rawOne = rawToolCall(raw)
      return interleave(
        {
          host: timed(() => host.run(hostBatch)),
          raw: timed(() => Promise.all(batch.map(rawOne)))
        },
        plan.concurrent
      )
    })
    const h = summarize(samples.host)
    const r = summarize(samples.raw)
    const name = `7. ${k} concurrent tool_call over 4 no-op ext`
    return [
      row({
        name,
        metric: "throughput (p50 batch)",
        host: (k * 1000) / h.p50,
        raw: (k * 1000) / r.p50,
        budget: null,
        unit: "dispatch/s"
      }),
      row({ name, metric: "batch p50", host: h.p50, raw: r.p50, budget: null, unit: "ms" }),
      row({ name, metric: "batch p99", host: h.p99, raw: r.p99, budget: null, unit: "ms" })
    ]
  }
}
