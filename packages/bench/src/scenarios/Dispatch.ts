import { type ExtensionCommand, noop, noopIds, sdkNoop } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import type { Plan } from "../Plan.ts"
import { latencyRows, type Row, row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { configOf, startHost } from "../HostSide.ts"
import { withSides } from "../Sides.ts"
import { summarize } from "../Stats.ts"
import { hostToolCall, rawToolCall, sessionId } from "./ToolCall.ts"

/**
 * 1. Sequential tool_call dispatches to 1 and to 8 no-op extensions (budget: p50 ratio ≤ 1.3, DESIGN §8), against
 * the raw client running the same processes the same way (each in a session of its own, as the host must). Also,
 * in a second loop of the same run, the host against the raw client with the processes in its own session (as the
 * raw side ran them before, to show what the arrangement alone moves); then id-echoing no-ops with
 * `reply_ids: "required"` (the host writes at once, without the turn of the event loop first); the same id-echoing
 * no-ops run by two hosts, reply_ids optional against required, to price the poll before each write; and one SDK
 * no-op, to price the SDK.
 */

/**
 * The budget pair (host, raw) in a loop of its own, then host against the raw client with the processes in its own
 * session in a second loop. Not one loop of three: a third side between two host dispatches keeps the host's
 * processes and code out of the caches longer than the raw client's, which cost the host 0.04–0.06 of the ratio
 * (medians of 10 blocks each way, docs/benchmarks.md); every other budget row is a loop of two.
 */
const measure = (count: number, command: ExtensionCommand, plan: Plan) =>
  withSides({ count, command }, [{ count, command }, { count, command, session: "caller" }], async (host, [raw = [], caller = []]) => {
    const pair = await interleave({ host: timed(hostToolCall(host)), raw: timed(rawToolCall(raw)) }, plan.dispatch)
    const callerPair = await interleave({ host: timed(hostToolCall(host)), caller: timed(rawToolCall(caller)) }, plan.dispatch)
    return { host: pair.host, raw: pair.raw, callerHost: callerPair.host, caller: callerPair.caller }
  })

const measurePair = (count: number, command: ExtensionCommand, plan: Plan) =>
  withSides({ count, command }, [{ count, command }], (host, [raw = []]) =>
    interleave({ host: timed(hostToolCall(host)), raw: timed(rawToolCall(raw)) }, plan.dispatch))

/**
 * The price of attribution without ids: two hosts over the same id-echoing no-op, one with `reply_ids` optional
 * (each write waits for a poll of the event loop) and one with it required (written at once), interleaved.
 */
const measureReplyIds = async (count: number, plan: Plan) => {
  const optional = await startHost(configOf(count, { ...noopIds, replyIds: "optional" }), sessionId)
  try {
    const required = await startHost(configOf(count, noopIds), sessionId)
    try {
      return await interleave({ optional: timed(hostToolCall(optional)), required: timed(hostToolCall(required)) }, plan.dispatch)
    } finally {
      await required.dispose()
    }
  } finally {
    await optional.dispose()
  }
}

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
      const caller = summarize(samples.caller)
      const callerHost = summarize(samples.callerHost)
      const name = `1. sequential tool_call, ${count} no-op ext`
      rows.push(...latencyRows(name, host, raw, 1.3))
      rows.push(row({ name, metric: "throughput", host: 1000 / host.mean, raw: 1000 / raw.mean, budget: null, unit: "dispatch/s" }))
      rows.push(row({
        name: `1. (same run, own loop) raw with the ${count} ext in the raw client's session`,
        metric: "p50",
        host: callerHost.p50,
        raw: caller.p50,
        budget: null,
        unit: "ms"
      }))
    }
    for (const count of [1, 8]) {
      progress(`${count} id-echoing no-op extension(s), reply_ids required, ${plan.dispatch.iterations} dispatches per side`)
      const samples = await measurePair(count, noopIds, plan)
      // The same budget: the configuration in which attribution is strongest (every stray caught by its id).
      rows.push(...latencyRows(`1. sequential tool_call, ${count} id-echoing no-op ext, reply_ids required`, summarize(samples.host), summarize(samples.raw), 1.3))
    }
    for (const count of [1, 8]) {
      progress(`${count} id-echoing no-op extension(s), reply_ids optional vs required, ${plan.dispatch.iterations} dispatches per side`)
      const samples = await measureReplyIds(count, plan)
      rows.push(row({
        name: `1. poll before each write: ${count} id-echoing ext, reply_ids optional (host col) vs required (raw col)`,
        metric: "p50",
        host: summarize(samples.optional).p50,
        raw: summarize(samples.required).p50,
        budget: null,
        unit: "ms"
      }))
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
