import { Effect } from "effect"
import { noop } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import { configOf, startHost } from "../HostSide.ts"
import { closeAll, rawStartup } from "../RawHost.ts"
import { row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { rawToolCall, sessionId, toolArgs } from "./ToolCall.ts"

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
    const host = await startHost(configOf(4, noop), sessionId)
    const raw = await rawStartup(4, noop.command, noop.args, sessionId)
    const batch = Array.from({ length: k }, (_, i) => i)
    const hostBatch = Effect.forEach(batch, () => host.host.toolCall({ tool: "bash", args: toolArgs }), {
      concurrency: "unbounded"
    })
    const rawOne = rawToolCall(raw)
    const samples = await interleave({
      host: timed(() => host.run(hostBatch)),
      raw: timed(() => Promise.all(batch.map(rawOne)))
    }, plan.concurrent).finally(async () => {
      await host.dispose()
      await closeAll(raw)
    })
    const h = summarize(samples.host)
    const r = summarize(samples.raw)
    const name = `7. ${k} concurrent tool_call over 4 no-op ext`
    return [
      row({ name, metric: "throughput (p50 batch)", host: (k * 1000) / h.p50, raw: (k * 1000) / r.p50, budget: null, unit: "dispatch/s" }),
      row({ name, metric: "batch p50", host: h.p50, raw: r.p50, budget: null, unit: "ms" }),
      row({ name, metric: "batch p99", host: h.p99, raw: r.p99, budget: null, unit: "ms" })
    ]
  }
}
