import { sleeping } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import { latencyRows, row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { withSides } from "../Sides.ts"
import { summarize } from "../Stats.ts"
import { hostToolCall, rawToolCall } from "./ToolCall.ts"

/**
 * 2. Fan-out: the host dispatching to 8 extensions that each take 50 ms, against the raw client dispatching to
 * one such extension (budget ≤ 1.2): parallel fan-out should cost about one extension's time, not eight.
 * The raw client's own 8-way fan-out runs interleaved too, for reference.
 */
export const fanOut: Scenario = {
  title: "2. fan-out to 8 sleeping extensions",
  run: async (plan, progress) => {
    progress(`8 × ${plan.sleepMs} ms extensions, ${plan.fanOut.iterations} dispatches per side`)
    const command = sleeping(plan.sleepMs)
    const samples = await withSides(
      { count: 8, command },
      [
        { count: 8, command },
        { count: 1, command }
      ],
      (host, [raw8 = [], raw1 = []]) =>
        interleave(
          {
            host8: timed(hostToolCall(host)),
            raw1: timed(rawToolCall(raw1)),
            raw8: timed(rawToolCall(raw8))
          },
          plan.fanOut
        )
    )
    const host8 = summarize(samples.host8)
    const one = summarize(samples.raw1)
    const eight = summarize(samples.raw8)
    const name = `2. fan-out: host to 8 × ${plan.sleepMs} ms ext vs raw to 1`
    const both = `2. fan-out: 8 × ${plan.sleepMs} ms ext, host vs raw`
    return [
      ...latencyRows(name, host8, one, 1.2),
      row({ name: both, metric: "p50", host: host8.p50, raw: eight.p50, budget: null, unit: "ms" })
    ]
  }
}
