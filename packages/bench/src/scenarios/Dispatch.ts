import { type ExtensionCommand, noop, noopIds, sdkNoop } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import type { Plan } from "../Plan.ts"
import { latencyRows, type Row, row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { configOf, startHost } from "../HostSide.ts"
import { type Placement, placed, placements } from "../Placement.ts"
import { withSides } from "../Sides.ts"
import { summarize } from "../Stats.ts"
import { hostToolCall, rawToolCall, sessionId } from "./ToolCall.ts"

/**
 * 1. Sequential tool_call dispatches to 1 and to 8 no-op extensions (budget: p50 ratio ≤ 1.3,
 * docs/design.md#performance-budget), against the raw client running the same processes the same way (each in a session
 * of its own, as the host must).
 *
 * Where the processes run decides the floor on a small VM (Placement.ts): the budget rows are measured twice, with
 * every extension process pinned to another core than the agent's main thread and pinned to the agent's core, the
 * same for both sides, each placement with its budget (`dispatchBudget`). Also: both sides as the kernel places
 * them (what a user's machine does; no budget where pinning is possible, since the two sides may land
 * differently), with, in a second loop of the same run, the raw client running the processes in its own session
 * (what the arrangement alone moves); id-echoing no-ops with `reply_ids: "required"` (the host writes at once,
 * without the turn of the event loop first); the same id-echoing no-ops run by two hosts, reply_ids optional
 * against required, to price the poll before each write; and one SDK no-op, to price the SDK.
 */

/**
 * The budget pair (host, raw) in a loop of its own, then host against the raw client with the processes in its own
 * session in a second loop. Not one loop of three: a third side between two host dispatches keeps the host's
 * processes and code out of the caches longer than the raw client's, which cost the host 0.04–0.06 of the ratio
 * (medians of 10 blocks each way, docs/benchmarks.md); every other budget row is a loop of two.
 */
const measure = (count: number, command: ExtensionCommand, plan: Plan) =>
  withSides(
    { count, command },
    [
      { count, command },
      { count, command, session: "caller" }
    ],
    async (host, [raw = [], caller = []]) => {
      const pair = await interleave({ host: timed(hostToolCall(host)), raw: timed(rawToolCall(raw)) }, plan.dispatch)
      const callerPair = await interleave(
        { host: timed(hostToolCall(host)), caller: timed(rawToolCall(caller)) },
        plan.dispatch
      )
      return { host: pair.host, raw: pair.raw, callerHost: callerPair.host, caller: callerPair.caller }
    }
  )

const measurePair = (count: number, command: ExtensionCommand, plan: Plan) =>
  withSides({ count, command }, [{ count, command }], (host, [raw = []]) =>
    interleave({ host: timed(hostToolCall(host)), raw: timed(rawToolCall(raw)) }, plan.dispatch)
  )

/**
 * The price of attribution without ids: two hosts over the same id-echoing no-op, one with `reply_ids` optional
 * (each write waits for a poll of the event loop) and one with it required (written at once), interleaved.
 */
const measureReplyIds = async (count: number, command: ExtensionCommand, plan: Plan) => {
  const optional = await startHost(configOf(count, { ...command, replyIds: "optional" }), sessionId)
  try {
    const required = await startHost(configOf(count, { ...command, replyIds: "required" }), sessionId)
    try {
      return await interleave(
        { optional: timed(hostToolCall(optional)), required: timed(hostToolCall(required)) },
        plan.dispatch
      )
    } finally {
      await required.dispose()
    }
  } finally {
    await optional.dispose()
  }
}

/** Host and raw to one SDK no-op, and raw to one plain no-op, all interleaved. */
const measureSdk = (command: (base: ExtensionCommand) => ExtensionCommand, plan: Plan) =>
  withSides(
    { count: 1, command: command(sdkNoop) },
    [
      { count: 1, command: command(sdkNoop) },
      { count: 1, command: command(noop) }
    ],
    (host, [rawSdk = [], rawPlain = []]) =>
      interleave(
        {
          host: timed(hostToolCall(host)),
          rawSdk: timed(rawToolCall(rawSdk)),
          rawPlain: timed(rawToolCall(rawPlain))
        },
        plan.dispatch
      )
  )

/**
 * The p50 budget of a dispatch row (docs/design.md#performance-budget leaves the placement open; docs/benchmarks.md,
 * "Which placement the budget means"). With the extensions on another core, or wherever the kernel puts them where
 * nothing can be pinned: ≤ 1.3, docs/design.md#performance-budget's figure, over a real cross-process round trip. On
 * the agent's own core nothing overlaps and the ratio is (floor + the host's CPU) over (floor + a minimal client's):
 * ≤ 2, the host's CPU per dispatch at most one same-core round trip.
 */
export const dispatchBudget = (placement: Placement | undefined): number =>
  placement !== undefined && placement.extensionCpu === placement.agentCpu ? 2 : 1.3

export const dispatch: Scenario = {
  title: "1. sequential tool_call dispatches",
  run: async (plan, progress) => {
    const rows: Array<Row> = []
    const pinned = placements.length > 0
    for (const count of [1, 8]) {
      // As the kernel places the processes (what a user's machine does): a coin flip per process on a small VM, so
      // the budget is judged on the pinned rows below where they can be measured (Placement.ts).
      progress(`${count} no-op extension(s), placed by the kernel, ${plan.dispatch.iterations} dispatches per side`)
      const samples = await measure(count, noop, plan)
      const host = summarize(samples.host)
      const raw = summarize(samples.raw)
      const caller = summarize(samples.caller)
      const callerHost = summarize(samples.callerHost)
      const name = `1. sequential tool_call, ${count} no-op ext${pinned ? ", placed by the kernel" : ""}`
      rows.push(...latencyRows(name, host, raw, pinned ? null : dispatchBudget(undefined)))
      rows.push(
        row({
          name,
          metric: "throughput",
          host: 1000 / host.mean,
          raw: 1000 / raw.mean,
          budget: null,
          unit: "dispatch/s"
        })
      )
      rows.push(
        row({
          name: `1. (same run, own loop) raw with the ${count} ext in the raw client's session`,
          metric: "p50",
          host: callerHost.p50,
          raw: caller.p50,
          budget: null,
          unit: "ms"
        })
      )
      if (pinned) {
        rows.push(
          ...(
            await placed(async (command, where, placement) => {
              progress(`${count} no-op extension(s)${where}, ${plan.dispatch.iterations} dispatches per side`)
              const s = await measurePair(count, command(noop), plan)
              return latencyRows(
                `1. sequential tool_call, ${count} no-op ext${where}`,
                summarize(s.host),
                summarize(s.raw),
                dispatchBudget(placement)
              )
            })
          ).flat()
        )
      }
    }
    for (const count of [1, 8]) {
      rows.push(
        ...(
          await placed(async (command, where, placement) => {
            progress(
              `${count} id-echoing no-op extension(s)${where}, reply_ids required, ${plan.dispatch.iterations} dispatches per side`
            )
            const s = await measurePair(count, command(noopIds), plan)
            // The same budget: the configuration in which attribution is strongest (every stray caught by its id).
            return latencyRows(
              `1. sequential tool_call, ${count} id-echoing no-op ext${where}, reply_ids required`,
              summarize(s.host),
              summarize(s.raw),
              dispatchBudget(placement)
            )
          })
        ).flat()
      )
    }
    for (const count of [1, 8]) {
      rows.push(
        ...(await placed(async (command, where) => {
          progress(
            `${count} id-echoing no-op extension(s)${where}, reply_ids optional vs required, ${plan.dispatch.iterations} dispatches per side`
          )
          const s = await measureReplyIds(count, command(noopIds), plan)
          return row({
            name: `1. poll before each write: ${count} id-echoing ext${where}, reply_ids optional (host col) vs required (raw col)`,
            metric: "p50",
            host: summarize(s.optional).p50,
            raw: summarize(s.required).p50,
            budget: null,
            unit: "ms"
          })
        }))
      )
    }
    // The SDK's price, where an agent usually meets an extension: on another core (the first placement).
    rows.push(
      ...(
        await placed(
          async (command, where) => {
            progress(`1 SDK no-op extension${where}, ${plan.dispatch.iterations} dispatches per side`)
            const sdk = await measureSdk(command, plan)
            const rawSdk = summarize(sdk.rawSdk)
            const rawPlain = summarize(sdk.rawPlain)
            return [
              ...latencyRows(
                `1. sequential tool_call, 1 SDK no-op ext${where} (both sides)`,
                summarize(sdk.host),
                rawSdk,
                null
              ),
              // The SDK's own price: the same raw client, SDK no-op (in the host column) against the plain no-op.
              row({
                name: `1. SDK price${where}: raw client to SDK no-op (host col) vs plain no-op`,
                metric: "p50",
                host: rawSdk.p50,
                raw: rawPlain.p50,
                budget: null,
                unit: "ms"
              })
            ]
          },
          placements.slice(0, 1)
        )
      ).flat()
    )
    return rows
  }
}
