import { AuditLog, ExtensionHost, FakeExtension, Telemetry } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Tracer } from "effect"
import { TestClock } from "effect/testing"

/**
 * The spans a dispatch makes, under a recording tracer and the test clock (no exporter, no network): a hung
 * extension's child span says it timed out, by its shape, with the on_failure that then decided; its dispatch's
 * span carries the decision from the record the sink is handed.
 */
describe("telemetry spans, in process", () => {
  it.effect("a timed-out extension: its child span's status, error and on_failure; the dispatch's decision", () =>
    Effect.gen(function* () {
      const spans: Array<Tracer.Span> = []
      const tracer = Tracer.make({
        span(options) {
          const span = Tracer.nativeTracer.span(options)
          spans.push(span)
          return span
        }
      })
      const records: Array<string> = []
      const sink: Telemetry.TelemetrySinkShape = {
        record: (record, span) => {
          records.push(record.event)
          span?.attribute("abhed.decision", (record.outcome as { decision?: string }).decision ?? "")
        }
      }
      const hang = FakeExtension.make("hang", (r) => (r.event === "tool_call" ? Effect.never : Effect.succeed({})), {
        timeout_ms: 1000,
        on_failure: "deny"
      })
      const decision = yield* Effect.gen(function* () {
        const h = yield* ExtensionHost
        const fiber = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: {}, call_id: "c-1" }))
        yield* TestClock.adjust("1 second")
        return (yield* Fiber.join(fiber)).decision
      }).pipe(
        Effect.provide(ExtensionHost.layerFake([hang], { sessionId: "s" })),
        Effect.provide(AuditLog.layerNone),
        Effect.provideService(Telemetry.TelemetrySink, sink),
        Effect.withTracer(tracer)
      )
      assert.strictEqual(decision, "deny")
      // The sink gets every record, though the audit sink keeps none.
      assert.deepStrictEqual(records, ["session_start", "list_tools", "tool_call", "session_end"])
      const call = spans.find((s) => s.name === "abhed.tool_call")
      assert.ok(call)
      assert.strictEqual(call.attributes.get("abhed.decision"), "deny")
      const child = spans.find(
        (s) => s.name === "abhed.extension" && s.parent._tag === "Some" && s.parent.value === call
      )
      assert.ok(child)
      assert.strictEqual(child.attributes.get("abhed.extension.status"), "timed_out")
      assert.strictEqual(child.attributes.get("abhed.extension.error"), "timed_out (1000 ms)")
      assert.strictEqual(child.attributes.get("abhed.extension.on_failure"), "deny")
      assert.strictEqual(child.attributes.get("abhed.extension.latency_ms"), 1000)
      // Ended after its latency on the test clock, within its dispatch.
      assert.ok(child.status._tag === "Ended" && call.status._tag === "Ended")
      if (child.status._tag === "Ended" && call.status._tag === "Ended") {
        assert.strictEqual(child.status.endTime - child.status.startTime, BigInt(1000) * BigInt(1_000_000))
        assert.ok(child.status.endTime <= call.status.endTime)
      }
    })
  )
})
