import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Metric } from "effect"
import { AuditLog, ExtensionHost, HostMetrics } from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import { latencyMillis, metricsByEvent, recordExtensionLatency } from "../src/HostMetrics.ts"

/**
 * The metrics every dispatch updates with no tracer installed and no audit kept (telemetry export off, the bench's
 * host): each exchange's latency under its extension, each decision under its verdict and deciders. Without a tracer
 * the round records the latencies itself and an undecided outcome is counted without the telemetry summary; both
 * must count exactly what the exporting path counts.
 */

const latencyOf = (extension: string) =>
  Metric.value(Metric.withAttributes(HostMetrics.extensionLatency, { extension })).pipe(Effect.map((s) => s.count))
const decisionsOf = (decision: string, extension: string) =>
  Metric.value(Metric.withAttributes(HostMetrics.decisions, { event: "tool_call", decision, extension })).pipe(
    Effect.map((s) => s.count)
  )

const guard = (name: string) =>
  FakeExtension.fromReplies(name, {
    tool_call: (req) => (req.args["command"] === "rm" ? { block: true, reason: "no rm" } : {})
  })

const run = <A>(
  fakes: ReadonlyArray<ReturnType<typeof guard>>,
  body: (h: ExtensionHost["Service"]) => Effect.Effect<A>
) =>
  Effect.gen(function* () {
    return yield* body(yield* ExtensionHost)
  }).pipe(
    Effect.provide(ExtensionHost.layerFake(fakes, { sessionId: "s-m" }).pipe(Layer.provideMerge(AuditLog.layerNone)))
  )

describe("dispatch metrics with telemetry off", () => {
  it.effect("one subscriber: its latency per exchange, an allow and a deny each counted once", () =>
    run([guard("m1-solo")], (h) =>
      Effect.gen(function* () {
        const [latency, allows, denies] = [
          yield* latencyOf("m1-solo"),
          yield* decisionsOf("allow", ""),
          yield* decisionsOf("deny", "m1-solo")
        ]
        yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        yield* h.toolCall({ tool: "bash", args: { command: "rm" } })
        assert.strictEqual(yield* latencyOf("m1-solo"), latency + 2)
        assert.strictEqual(yield* decisionsOf("allow", ""), allows + 1)
        assert.strictEqual(yield* decisionsOf("deny", "m1-solo"), denies + 1)
      })
    )
  )

  it.effect("a round to several, every one replying or one failing: each latency counted once", () =>
    run(
      [guard("m2-a"), guard("m2-b"), FakeExtension.fromReplies("m2-broken", { tool_call: () => ({ ask: 1 }) })],
      (h) =>
        Effect.gen(function* () {
          const before = [yield* latencyOf("m2-a"), yield* latencyOf("m2-b"), yield* latencyOf("m2-broken")]
          const denies = yield* decisionsOf("deny", "m2-a,m2-b")
          // The first call kills m2-broken (a malformed reply); the second goes to the two left, both replying.
          yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
          yield* h.toolCall({ tool: "bash", args: { command: "rm" } })
          const after = [yield* latencyOf("m2-a"), yield* latencyOf("m2-b"), yield* latencyOf("m2-broken")]
          assert.deepStrictEqual(
            after.map((n, i) => n - (before[i] ?? 0)),
            [2, 2, 2]
          )
          assert.strictEqual(yield* decisionsOf("deny", "m2-a,m2-b"), denies + 1)
        })
    )
  )
})

describe("latency series updated in milliseconds", () => {
  // The hot path updates the timers' histograms with the milliseconds it has (no Duration per update): each series
  // must hold exactly what the timer itself would have recorded, and be the timer's own series.
  const timer = Metric.timer("abhed_test_reference_timer")
  const inRegistry = <A>(effect: Effect.Effect<A>) => Effect.provideService(effect, Metric.MetricRegistry, new Map())

  it.effect("an extension's latency: what the timer records for Duration.millis", () =>
    inRegistry(
      Effect.gen(function* () {
        const context = yield* Effect.context()
        for (const ms of [-0, 0, 1, 7, 2.5, 1 / 3, 1e-7, 40_000, Number.NaN]) {
          recordExtensionLatency("ml-ext", ms, context)
          timer.updateUnsafe(Duration.millis(ms), context)
        }
        const series = yield* Metric.value(Metric.withAttributes(HostMetrics.extensionLatency, { extension: "ml-ext" }))
        const expected = yield* Metric.value(timer)
        assert.deepStrictEqual(series, expected)
        assert.isTrue(Object.is(series.min, expected.min), "-0 is recorded as the timer records it: 0")
      })
    )
  )

  it.effect("a dispatch's latency: what the timer records for Duration.nanos, in the event's series", () =>
    inRegistry(
      Effect.gen(function* () {
        const context = yield* Effect.context()
        for (const nanos of [0n, 1n, 999_999n, 1_000_000n, 1_234_567n, 123_456_789_012n]) {
          metricsByEvent.context.latency.updateUnsafe(latencyMillis(nanos), context)
          timer.updateUnsafe(Duration.nanos(nanos), context)
        }
        const series = yield* Metric.value(Metric.withAttributes(HostMetrics.dispatchLatency, { event: "context" }))
        assert.deepStrictEqual(series, yield* Metric.value(timer))
      })
    )
  )
})
