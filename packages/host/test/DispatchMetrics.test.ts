import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Metric } from "effect"
import { AuditLog, ExtensionHost, HostMetrics } from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"

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
