import { noop } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import { configOf, startHost } from "../HostSide.ts"
import { spawnPerEvent } from "../RawHost.ts"
import { latencyRows } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { hostToolCall, sessionId, toolArgs } from "./ToolCall.ts"

/**
 * 6. What a hook system that spawns per event pays: the same no-op extension started once per event (raw
 * column), against the host's long-lived process (host column). No budget: the ratio is the headline, and
 * 1/ratio is how many times faster a long-lived extension answers.
 */
export const spawnPerEventScenario: Scenario = {
  title: "6. spawn per event vs long-lived",
  run: async (plan, progress) => {
    progress(`1 extension, ${plan.spawnPerEvent.iterations} events per side`)
    const host = await startHost(configOf(1, noop), sessionId)
    let n = 0
    const samples = await interleave(
      {
        host: timed(hostToolCall(host)),
        raw: timed(() => {
          n += 1
          return spawnPerEvent(noop.command, noop.args, {
            event: "tool_call",
            session_id: sessionId,
            call_id: `c-${n}`,
            tool: "bash",
            args: toolArgs
          })
        })
      },
      plan.spawnPerEvent
    ).finally(() => host.dispose())
    const h = summarize(samples.host)
    const r = summarize(samples.raw)
    const name = "6. tool_call: host long-lived vs spawn per event"
    return [...latencyRows(name, h, r, null)]
  }
}
