import { AuditLog, type AuditRecord, type ExchangeStatus } from "@abhed/host/AuditLog"
import { Console, Effect, Option } from "effect"
import { loadConfig } from "../ConfigFile.ts"
import { legend, renderHostRecord, renderLine, renderSummary, tally } from "./DemoTable.ts"
import { exampleConfig, exampleSession } from "./Examples.ts"
import { processHost } from "../HostLayer.ts"
import { inputLines } from "../Input.ts"
import { type LineResult, runSession } from "../run/Session.ts"
import { styleFor } from "../Style.ts"

/** Exchange statuses that say nothing about an extension's health. */
const healthy: ReadonlySet<ExchangeStatus> = new Set<ExchangeStatus>(["replied", "not_subscribed", "not_matched"])

/** Runs docs/examples/abhed.json over docs/examples/session.jsonl and prints what each extension said. */
export const runDemo = Effect.gen(function* () {
  const s = yield* Effect.sync(() => styleFor(process.stdout))
  const loaded = yield* loadConfig(exampleConfig)
  const lines = yield* inputLines(Option.some(exampleSession))
  const audit = yield* AuditLog
  const results: Array<LineResult> = []
  let seen = 0
  const fresh = Effect.map(audit.entries, (all) => {
    const records = all.slice(seen)
    seen = all.length
    return records
  })
  yield* Console.log(s.bold(`abhed-ext demo: ${loaded.config.extensions.length} extensions from ${exampleConfig}`))
  yield* Console.log(s.dim(`over ${exampleSession}\n`))
  yield* Console.log(`${legend(s)}\n`)
  yield* runSession({
    lines,
    host: processHost(loaded),
    defaultSessionId: "demo",
    onLine: (result) =>
      Effect.gen(function* () {
        results.push(result)
        const records = yield* fresh
        // The line's own record is the last one; any before it were made by the host on its own (startup).
        const own = result.input !== undefined && records.at(-1)?.event === result.input.event ? records.slice(-1) : []
        const hosts: ReadonlyArray<AuditRecord> = records.slice(0, records.length - own.length)
        for (const r of hosts) yield* Console.log(`${renderHostRecord(r, "sent by the host at startup", s)}\n`)
        yield* Console.log(`${renderLine(result, own, s)}\n`)
      })
  })
  const closing = yield* fresh
  for (const r of closing) yield* Console.log(`${renderHostRecord(r, "sent by the host as the session closed", s)}\n`)
  const all = yield* audit.entries
  const dead = [
    ...new Set(
      all.flatMap((r) =>
        r.rounds.flatMap((round) => round.exchanges.filter((x) => !healthy.has(x.status)).map((x) => x.extension))
      )
    )
  ].sort()
  yield* Console.log(renderSummary(tally(results), dead))
}).pipe(Effect.provide(AuditLog.layerMemory))
