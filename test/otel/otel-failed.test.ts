import { AuditLog, type AuditRecord, ExtensionHost, FakeExtension } from "@abhed/host"
import { logBody, recordAttributes } from "@abhed/host/TelemetryRecord"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Tracer } from "effect"

/**
 * A reply that says `failed` (docs/protocol.md), on a span: its status, the host's fixed error and the on_failure
 * that decided; the extension's own words (which may quote what it read) on no span.
 */
describe("telemetry spans of a failed reply", () => {
  it.effect("status failed, the fixed error, the on_failure; its words on no span", () =>
    Effect.gen(function* () {
      const spans: Array<Tracer.Span> = []
      const tracer = Tracer.make({
        span(options) {
          const span = Tracer.nativeTracer.span(options)
          spans.push(span)
          return span
        }
      })
      const guard = FakeExtension.fromReplies(
        "guard",
        { tool_call: () => ({ failed: "could not parse AKIA-SECRET-KEY" }) },
        { on_failure: "deny" }
      )
      const decision = yield* Effect.gen(function* () {
        const h = yield* ExtensionHost
        return (yield* h.toolCall({ tool: "bash", args: {}, call_id: "c-1" })).decision
      }).pipe(
        Effect.provide(ExtensionHost.layerFake([guard], { sessionId: "s" })),
        Effect.provide(AuditLog.layerNone),
        Effect.withTracer(tracer)
      )
      assert.strictEqual(decision, "deny")
      const call = spans.find((s) => s.name === "abhed.tool_call")
      const child = spans.find(
        (s) => s.name === "abhed.extension" && s.parent._tag === "Some" && s.parent.value === call
      )
      assert.ok(child)
      assert.strictEqual(child.attributes.get("abhed.extension.status"), "failed")
      assert.strictEqual(child.attributes.get("abhed.extension.error"), "failed (the extension could not answer)")
      assert.strictEqual(child.attributes.get("abhed.extension.on_failure"), "deny")
      for (const span of spans)
        for (const value of span.attributes.values()) assert.notInclude(String(value), "AKIA-SECRET-KEY")
    })
  )

  it("its words, which the audit keeps (the exchange's failed), are in no log record", () => {
    const record: AuditRecord = {
      seq: 1,
      session_id: "s",
      time: "2026-12-01T00:00:00.000Z",
      event: "tool_call",
      call_id: "c-1",
      tool: "bash",
      args: {},
      rounds: [
        {
          round: 1,
          exchanges: [
            {
              extension: "guard",
              status: "failed",
              latency_ms: 1,
              error: "failed (the extension could not answer)",
              failed: "could not parse AKIA-SECRET-KEY"
            }
          ]
        }
      ],
      outcome: { decision: "deny", reasons: [{ extension: "guard", reason: "guard could not answer" }] },
      notes: [],
      duration_ms: 1
    }
    for (const args of ["digest", "full"] as const) {
      assert.notInclude(JSON.stringify(logBody(record, args)), "AKIA-SECRET-KEY")
      assert.notInclude(JSON.stringify(recordAttributes(record, args)), "AKIA-SECRET-KEY")
    }
  })
})
