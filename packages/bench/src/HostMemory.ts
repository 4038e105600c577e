import { Effect } from "effect"
import { noop } from "./ExtensionFiles.ts"
import { configOf, startHost } from "./HostSide.ts"
import { usage } from "./ProcessUsage.ts"
import { sessionId, toolArgs } from "./scenarios/ToolCall.ts"

/**
 * Scenario 5's host side, run as a process of its own like the raw side (`RawMemory.ts`): RSS belongs to the
 * whole process, so a reading taken in the bench's own process would carry what earlier scenarios left behind.
 * The host makes `argv[3]` sequential tool_call dispatches to 4 no-op extensions and prints one JSON line
 * `{ "first": Usage, "total": Usage }`: its usage after `argv[2]` dispatches and after `argv[3]`.
 */
const first = Number(process.argv[2])
const total = Number(process.argv[3])
if (!Number.isInteger(first) || !Number.isInteger(total) || first < 1 || total < first) {
  throw new Error(`HostMemory: expected two dispatch counts, first ≤ total, got ${process.argv[2]} ${process.argv[3]}`)
}
const host = await startHost(configOf(4, noop), sessionId)
// Sequential dispatches, 1000 per runPromise: the loop's own bookkeeping stays out of the readings.
const dispatchMany = (n: number) =>
  host.run(
    Effect.gen(function* () {
      for (let i = 0; i < n; i++) yield* host.host.toolCall({ tool: "bash", args: toolArgs })
    })
  )
const runUpTo = async (from: number, to: number) => {
  for (let done = from; done < to; done += 1000) await dispatchMany(Math.min(1000, to - done))
}
try {
  await runUpTo(0, first)
  const atFirst = usage()
  await runUpTo(first, total)
  const atTotal = usage()
  process.stdout.write(`${JSON.stringify({ first: atFirst, total: atTotal })}\n`)
} finally {
  await host.dispose()
}
