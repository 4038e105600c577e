import { noop } from "./ExtensionFiles.ts"
import { usage } from "./ProcessUsage.ts"
import { closeAll, rawStartup } from "./RawHost.ts"
import { rawToolCall, sessionId } from "./scenarios/ToolCall.ts"

/**
 * Scenario 5's raw side, run as a process of its own (RSS belongs to the whole process): the raw client makes
 * `argv[2]` sequential tool_call dispatches to 4 no-op extensions, then prints its `Usage` as one JSON line.
 */
const total = Number(process.argv[2])
if (!Number.isInteger(total) || total < 1)
  throw new Error(`RawMemory: expected a dispatch count, got ${process.argv[2]}`)
const extensions = await rawStartup(4, noop.command, noop.args, sessionId)
try {
  // The same request the other scenarios' raw side sends (scenarios/ToolCall.ts).
  const dispatch = rawToolCall(extensions)
  for (let n = 1; n <= total; n++) await dispatch()
  process.stdout.write(`${JSON.stringify(usage())}\n`)
} finally {
  await closeAll(extensions)
}
