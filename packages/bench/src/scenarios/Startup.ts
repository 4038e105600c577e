import { noop } from "../ExtensionFiles.ts"
import { interleave, time } from "../Harness.ts"
import { configOf, type HostHandle, startHost } from "../HostSide.ts"
import { closeAll, type RawExtension, rawStartup } from "../RawHost.ts"
import { latencyRows } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { sessionId } from "./ToolCall.ts"

/**
 * 4. Startup to ready of 8 no-op extensions: spawn, session_start, list_tools (budget: p50 ratio ≤ 1.2).
 * Only the way up is timed; shutting down is not part of the figure.
 */
export const startup: Scenario = {
  title: "4. startup to ready",
  run: async (plan, progress) => {
    progress(`8 extensions, ${plan.startup.iterations} startups per side`)
    const config = configOf(8, noop)
    const samples = await interleave(
      {
        host: async () => {
          let handle: HostHandle | undefined
          const ms = await time(async () => {
            handle = await startHost(config, sessionId)
          })
          await handle?.dispose()
          return ms
        },
        raw: async () => {
          let extensions: ReadonlyArray<RawExtension> = []
          const ms = await time(async () => {
            extensions = await rawStartup(8, noop.command, noop.args, sessionId)
          })
          await closeAll(extensions)
          return ms
        }
      },
      plan.startup
    )
    const h = summarize(samples.host)
    const r = summarize(samples.raw)
    const name = "4. startup to ready, 8 no-op ext"
    return [...latencyRows(name, h, r, 1.2)]
  }
}
