import { AuditLog, ExtensionHost, FakeExtension } from "@abhed/host"
import { Effect, Layer } from "effect"

/**
 * The host's own CPU per dispatch, without processes: `node packages/bench/src/HostCpu.ts N` runs 7 × 5000
 * sequential tool_call dispatches to N in-process fakes (each answers `{}`; audit off) and prints the median and
 * the best µs per dispatch. Not a budget row (the fakes' own fibers are in it); for comparing host changes.
 */
const count = Number(process.argv[2] ?? 1)
if (!Number.isInteger(count) || count < 1)
  throw new Error(`HostCpu: expected a number of fakes, got ${process.argv[2]}`)
const fakes = Array.from({ length: count }, (_, i) => FakeExtension.fromReplies(`fake-${i}`, { tool_call: () => ({}) }))
const perDispatch = Effect.gen(function* () {
  const host = yield* ExtensionHost
  const readings: Array<number> = []
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now()
    for (let i = 0; i < 5000; i++) yield* host.toolCall({ tool: "bash", args: { command: "ls" } })
    readings.push(((performance.now() - t0) / 5000) * 1000)
  }
  return readings.sort((a, b) => a - b)
}).pipe(Effect.provide(ExtensionHost.layerFake(fakes, { sessionId: "s" }).pipe(Layer.provide(AuditLog.layerNone))))
const readings = await Effect.runPromise(perDispatch)
process.stdout.write(
  `${count} fakes: µs per dispatch, median ${readings[3]?.toFixed(2)}, best ${readings[0]?.toFixed(2)}\n`
)
