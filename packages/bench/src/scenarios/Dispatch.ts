import { type ExtensionCommand, noop, sdkNoop } from "../ExtensionFiles.ts"
import type { Plan } from "../Plan.ts"
import { interleave, timed } from "../Harness.ts"
import { type Row, latencyRows, row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { withSides } from "../Sides.ts"
import { summarize } from "../Stats.ts"
import { hostToolCall, rawToolCall } from "./ToolCall.ts"

/**
 * 1. Sequential tool_call dispatches to 1 and to 8 no-op extensions (budget: p50 ratio ≤ 1.3, DESIGN §8), and the same to
 * one SDK no-op, to price the SDK.
 */
const measure = (count: number, command: ExtensionCommand, plan: Plan) =>
  withSides({ count, command }, [{ count, command }], (host, [raw = []]) =>
    interleave({ host: timed(hostToolCall(host)), raw: timed(rawToolCall(raw)) }, plan.dispatch))

/** Host and raw to one SDK no-op, and raw to one plain no-op, all interleaved. */
const measureSdk = (plan: Plan) =>
  withSides(
    { count: 1, command: sdkNoop },
    [{ count: 1, command: sdkNoop }, { count: 1, command: noop }],
    (host, [rawSdk = [], rawPlain = []]) =>
      interleave({
        host: timed(hostToolCall(host)),
        rawSdk: timed(rawToolCall(rawSdk)),
        rawPlain: timed(rawToolCall(rawPlain))
      }, plan.dispatch)
  )

export const dispatch: Scenario = {
  title: "1. sequential tool_call dispatches",
  run: async (plan, progress) => {
    const rows: Array<Row> = []
    for (const count of [1, 8]) {
      progress(`${count} no-op extension(s), ${plan.dispatch.iterations} dispatches per side`)
      const samples = await measure(count, noop, plan)
      const host = summarize(samples.host)
      const raw = summarize(samples.raw)
      const name = `1. sequential tool_call, ${count} no-op ext`
      rows.push(...latencyRows(name, host, raw, 1.3))
      rows.push(row({ name, metric: "throughput", host: 1000 / host.mean, raw: 1000 / raw.mean, budget: null, unit: "dispatch/s" }))
    }
    progress(`1 SDK no-op extension, ${plan.dispatch.iterations} dispatches per side`)
    const sdk = await measureSdk(plan)
    const host = summarize(sdk.host)
    const rawSdk = summarize(sdk.rawSdk)
    const rawPlain = summarize(sdk.rawPlain)
    const name = "1. sequential tool_call, 1 SDK no-op ext (both sides)"
    rows.push(...latencyRows(name, host, rawSdk, null))
    // The SDK's own price: the same raw client, SDK no-op (in the host column) against the plain no-op.
    const price = "1. SDK price: raw client to SDK no-op (host col) vs plain no-op"
    rows.push(row({ name: price, metric: "p50", host: rawSdk.p50, raw: rawPlain.p50, budget: null, unit: "ms" }))
    return rows
  }
}
