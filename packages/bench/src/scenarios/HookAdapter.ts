import { claudeHook, claudeHookAdapter } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import { configOf, startHost } from "../HostSide.ts"
import { spawnPerEvent } from "../RawHost.ts"
import { latencyRows } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { hostToolCall, sessionId, toolArgs } from "./ToolCall.ts"

/**
 * 9. A Claude Code command hook (bash, JSON answer) run through `abhed-ext hook` (host column: the host's dispatch
 * to the adapter, which spawns the hook once and maps its answer) against the same hook spawned per event directly
 * with the peer's input on stdin, as Claude Code does (raw column). Budget 1.1 at p50: the adapter adds at most
 * 10% to the spawn the peer pays anyway.
 */
export const hookAdapter: Scenario = {
  title: "9. hook through the adapter vs spawned per event",
  run: async (plan, progress) => {
    progress(`1 hook, ${plan.hookAdapter.iterations} events per side`)
    const base = configOf(1, claudeHookAdapter)
    const config = { ...base, extensions: base.extensions.map((e) => ({ ...e, events: ["tool_call" as const] })) }
    const host = await startHost(config, sessionId)
    let n = 0
    const samples = await interleave(
      {
        host: timed(hostToolCall(host)),
        raw: timed(() => {
          n += 1
          return spawnPerEvent(claudeHook.command, claudeHook.args, {
            session_id: sessionId,
            cwd: process.cwd(),
            permission_mode: "default",
            hook_event_name: "PreToolUse",
            tool_name: "Bash",
            tool_input: toolArgs,
            tool_use_id: `c-${n}`
          })
        })
      },
      plan.hookAdapter
    ).finally(() => host.dispose())
    const h = summarize(samples.host)
    const r = summarize(samples.raw)
    const name = "9. tool_call: Claude hook via abhed-ext hook vs spawned per event"
    return [...latencyRows(name, h, r, 1.1)]
  }
}
