import type { PolicyRule } from "@abhed/protocol"
import { noop } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import { configOf, type HostHandle, startHost } from "../HostSide.ts"
import { type Row, latencyRows } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { hostToolCall, sessionId } from "./ToolCall.ts"

/**
 * 10. Matchers (docs/design.md#performance-budget): 8 no-op extensions of which 7 have a `match` that misses the call
 * (a `git push*` guard; the call is `git status --short`), against the host's own dispatch to 1 no-op extension,
 * interleaved in the same run. Both columns are the host: the "raw" column is the 1-extension host. Budget: p50 ≤ 1.1×,
 * i.e. an extension whose rules do not match costs (nearly) nothing: no write, no fiber, one glob test per round.
 */

// The bench call is `git status --short` (ToolCall.ts): it misses this rule.
const miss: ReadonlyArray<PolicyRule> = [{ tool: "bash", args: { command: "git push*" }, reason: undefined }]

const matchersConfig = () => {
  const base = configOf(8, noop)
  return {
    ...base,
    // ext-00 takes every call; ext-01 … ext-07 only pushes.
    extensions: base.extensions.map((x, i) => (i === 0 ? x : { ...x, match: miss }))
  }
}

export const matchers: Scenario = {
  title: "10. matchers: 7 of 8 extensions do not match",
  run: async (plan, progress) => {
    progress(`8 no-op extensions (7 not matching) vs 1, ${plan.dispatch.iterations} dispatches per side`)
    const hosts: Array<HostHandle> = []
    try {
      const eight = await startHost(matchersConfig(), sessionId)
      hosts.push(eight)
      const one = await startHost(configOf(1, noop), sessionId)
      hosts.push(one)
      const samples = await interleave(
        { eight: timed(hostToolCall(eight)), one: timed(hostToolCall(one)) },
        plan.dispatch
      )
      const a = summarize(samples.eight)
      const b = summarize(samples.one)
      const name = "10. tool_call, 8 no-op ext of which 7 do not match (raw col: host, 1 ext)"
      const rows: Array<Row> = [...latencyRows(name, a, b, 1.1)]
      return rows
    } finally {
      for (const h of hosts) await h.dispose()
    }
  }
}
