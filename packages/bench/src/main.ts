import { currentMachine } from "./Machine.ts"
import { full, type Plan, quick } from "./Plan.ts"
import { document, type Row, toJson, toTable } from "./Report.ts"
import type { Scenario } from "./Scenario.ts"
import { concurrent } from "./scenarios/Concurrent.ts"
import { dispatch } from "./scenarios/Dispatch.ts"
import { fanOut } from "./scenarios/FanOut.ts"
import { hookAdapter } from "./scenarios/HookAdapter.ts"
import { largeContext } from "./scenarios/LargeContext.ts"
import { matchers } from "./scenarios/Matchers.ts"
import { mcpAdapter } from "./scenarios/McpAdapter.ts"
import { memory } from "./scenarios/Memory.ts"
import { sdkFootprint } from "./scenarios/SdkFootprint.ts"
import { spawnPerEventScenario } from "./scenarios/SpawnPerEvent.ts"
import { startup } from "./scenarios/Startup.ts"
import { telemetry } from "./scenarios/Telemetry.ts"

/**
 * `pnpm bench [--quick] [--json] [--only N,M]`: every scenario, host and raw interleaved in this one process.
 * stdout carries only the result (table, or the JSON document with --json); progress goes to stderr.
 */

const scenarios: ReadonlyArray<readonly [number, Scenario]> = [
  [1, dispatch],
  [2, fanOut],
  [3, largeContext],
  [4, startup],
  [5, memory],
  [6, spawnPerEventScenario],
  [7, concurrent],
  [8, sdkFootprint],
  [9, hookAdapter],
  [10, matchers],
  [11, mcpAdapter],
  [12, telemetry]
]

const usage = "usage: pnpm bench [--quick] [--json] [--only 1,2,...]"

const parseArgs = (argv: ReadonlyArray<string>) => {
  let plan: Plan = full
  let json = false
  let only: ReadonlySet<number> | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === "--quick") plan = quick
    else if (arg === "--json") json = true
    else if (arg === "--only") {
      i += 1
      only = new Set((argv[i] ?? "").split(",").map(Number))
    } else if (arg === "--help" || arg === "-h") {
      process.stdout.write(`${usage}\n`)
      process.exit(0)
    } else if (arg !== "--") {
      process.stderr.write(`unknown argument ${arg}\n${usage}\n`)
      process.exit(2)
    }
  }
  return { plan, json, only }
}

const main = async () => {
  const { json, only, plan } = parseArgs(process.argv.slice(2))
  const machine = currentMachine(plan.mode)
  const started = process.hrtime.bigint()
  const rows: Array<Row> = []
  for (const [n, scenario] of scenarios) {
    if (only !== undefined && !only.has(n)) continue
    const progress = (message: string) => process.stderr.write(`[${scenario.title}] ${message}\n`)
    const t0 = process.hrtime.bigint()
    rows.push(...(await scenario.run(plan, progress)))
    progress(`done in ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s`)
  }
  process.stderr.write(`whole run: ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s\n`)
  const doc = document(machine, rows)
  process.stdout.write(`${json ? toJson(doc) : toTable(doc)}\n`)
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
