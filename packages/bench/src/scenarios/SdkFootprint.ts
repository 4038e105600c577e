import { existsSync, readFileSync } from "node:fs"
import { builtSdk, noop, sdkNoopBuilt } from "../ExtensionFiles.ts"
import { interleave, time } from "../Harness.ts"
import { type RawExtension, spawnRaw } from "../RawHost.ts"
import { row } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { sessionId } from "./ToolCall.ts"

/** Resident memory of another process, from /proc (Linux); NaN elsewhere. */
const rssMiB = (pid: number | undefined): number => {
  if (pid === undefined) return Number.NaN
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match?.[1] === undefined ? Number.NaN : Number(match[1]) / 1024
  } catch {
    return Number.NaN
  }
}

const sessionStart = Buffer.from(`${JSON.stringify({ event: "session_start", session_id: sessionId })}\n`)
const toolCall = Buffer.from(
  `${JSON.stringify({ event: "tool_call", session_id: sessionId, call_id: "c", tool: "bash", args: { command: "ls" } })}\n`
)

/**
 * 8. The SDK's own footprint: `Extension.main({})` from the built package against noop.mjs, the plain Node loop
 * (budget: ratio ≤ 1.3 for both). Start is spawn to the first reply (session_start); RSS is the extension
 * process's resident memory after 100 more requests. The SDK's no-op loads nothing from effect (docs/extensions.md).
 */
export const sdkFootprint: Scenario = {
  title: "8. SDK no-op footprint",
  run: async (plan, progress) => {
    if (!existsSync(builtSdk)) throw new Error(`${builtSdk} is missing: run \`pnpm build\` first (pnpm bench does)`)
    progress(`${plan.startup.iterations} starts per side`)
    const rss = { sdk: [] as Array<number>, plain: [] as Array<number> }
    const side = (command: typeof noop, into: Array<number>) => async () => {
      let extension: RawExtension | undefined
      const ms = await time(async () => {
        extension = spawnRaw(command.command, command.args)
        await extension.send(sessionStart)
      })
      if (extension !== undefined) {
        for (let i = 0; i < 100; i++) await extension.send(toolCall)
        into.push(rssMiB(extension.pid))
        await extension.close()
      }
      return ms
    }
    const samples = await interleave(
      { sdk: side(sdkNoopBuilt, rss.sdk), plain: side(noop, rss.plain) },
      { warmup: plan.startup.warmup, iterations: plan.startup.iterations * 2 }
    )
    const name = "8. SDK no-op ext vs plain Node loop"
    const start = { sdk: summarize(samples.sdk), plain: summarize(samples.plain) }
    // Warm-up runs pushed readings too: keep the measured ones only.
    const kept = (all: ReadonlyArray<number>) => summarize(all.slice(all.length - samples.sdk.length))
    return [
      row({
        name,
        metric: "start to first reply p50",
        host: start.sdk.p50,
        raw: start.plain.p50,
        budget: 1.3,
        unit: "ms"
      }),
      row({ name, metric: "rss p50", host: kept(rss.sdk).p50, raw: kept(rss.plain).p50, budget: 1.3, unit: "MiB" })
    ]
  }
}
