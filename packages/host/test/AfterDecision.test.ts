import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scheduler, Tracer } from "effect"
import { TestClock } from "effect/testing"
import { AfterDecisionCap, afterDecision, runAfterDecision } from "../src/AfterDecision.ts"
import type { AuditRecord } from "../src/AuditRecord.ts"
import { AuditLog } from "../src/AuditLog.ts"
import { ExtensionHost } from "../src/ExtensionHost.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import { ExportedSpan, exporting, type Pending, type Recorder, tagRecord } from "../src/TelemetryTracer.ts"
import { TelemetrySink, type TelemetrySinkShape } from "../src/TelemetrySink.ts"

/**
 * Telemetry's share of a dispatch waits until the decision is handed back (AfterDecision.ts): the exporting sink's
 * record, the dispatch's span's end and its exchanges' child spans come in a turn of their own, with the times of the
 * decision. A sink of an embedder's own still gets each record before its dispatch returns.
 */

/** One extension that takes 5 ms (on the test clock) to allow. */
const slow = FakeExtension.make("slow", (r) =>
  r.event === "tool_call" ? Effect.as(Effect.sleep("5 millis"), {}) : Effect.succeed({})
)

/**
 * Runs one tool_call to its decision, noting what `seen` reads at that moment (in the step that has the outcome:
 * no turn of the event loop in between, however many steps the dispatch took), then moves the clock on by a second.
 */
const callThenWait = <A>(seen: () => A) =>
  Effect.gen(function* () {
    const h = yield* ExtensionHost
    yield* Effect.forkChild(TestClock.adjust("5 millis"))
    const { atDecision, outcome } = yield* Effect.map(
      h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: "c-1" }),
      (outcome) => ({ outcome, atDecision: seen() })
    ).pipe(Effect.provideService(Scheduler.MaxOpsBeforeYield, Number.MAX_SAFE_INTEGER))
    yield* TestClock.adjust("1 second")
    return { atDecision, outcome }
  })

/** A sink that keeps the records and, as telemetry's own does, tags the dispatch's span with each. */
const sinkOf = (records: Array<AuditRecord>, afterDecision: boolean): TelemetrySinkShape => ({
  afterDecision,
  record: (record, span) => {
    records.push(record)
    if (span !== undefined) tagRecord(span, record, "digest")
  }
})

/** An exporting tracer (TelemetryTracer.ts) whose spans and exchanges land in `items`. */
const exportingRecorder = () => {
  const items: Array<Pending> = []
  const recorder: { tracer: Tracer.Tracer } & Omit<Recorder, "tracer"> = {
    tracer: Tracer.nativeTracer,
    push: (item) => {
      items.push(item)
    },
    args: "digest"
  }
  recorder.tracer = Tracer.make({ span: (options) => new ExportedSpan(options, recorder) })
  exporting.set(recorder.tracer, recorder)
  return { items, recorder }
}

const underHost = <A, E>(effect: Effect.Effect<A, E, ExtensionHost>) =>
  effect.pipe(Effect.provide(ExtensionHost.layerFake([slow], { sessionId: "s" })), Effect.provide(AuditLog.layerNone))

describe("after the decision", () => {
  it.effect("a sink of an embedder's own gets each record before its dispatch returns", () =>
    Effect.gen(function* () {
      const records: Array<AuditRecord> = []
      const { atDecision } = yield* underHost(callThenWait(() => records.map((r) => r.event))).pipe(
        Effect.provideService(TelemetrySink, sinkOf(records, false))
      )
      assert.deepStrictEqual(atDecision, ["session_start", "list_tools", "tool_call"])
    })
  )

  it.effect("telemetry's own sink gets the record after the decision, with the decision's duration", () =>
    Effect.gen(function* () {
      const records: Array<AuditRecord> = []
      const { atDecision, outcome } = yield* underHost(callThenWait(() => records.map((r) => r.event))).pipe(
        Effect.provideService(TelemetrySink, sinkOf(records, true))
      )
      assert.strictEqual(outcome.decision, "allow")
      // The tool_call's record was not built when its decision came back.
      assert.notInclude(atDecision, "tool_call")
      runAfterDecision()
      const call = records.find((r) => r.event === "tool_call")
      assert.ok(call)
      // Built a second later, it still says how long the dispatch took.
      assert.strictEqual(call.duration_ms, 5)
      assert.strictEqual(call.outcome, outcome)
    })
  )

  it.effect(
    "with an audit log kept too, the audit has the record at the decision, and telemetry the same record after",
    () =>
      Effect.gen(function* () {
        const { recorder } = exportingRecorder()
        const records: Array<AuditRecord> = []
        const { atDecision, audited } = yield* Effect.gen(function* () {
          runAfterDecision()
          const audit = yield* AuditLog
          const { atDecision } = yield* callThenWait(() => records.filter((r) => r.event === "tool_call").length)
          const audited = (yield* audit.entries).find((r) => r.event === "tool_call")
          return { atDecision, audited }
        }).pipe(
          Effect.provide(ExtensionHost.layerFake([slow], { sessionId: "s" })),
          Effect.provide(AuditLog.layerMemory),
          Effect.provideService(TelemetrySink, sinkOf(records, true)),
          Effect.withTracer(recorder.tracer)
        )
        assert.strictEqual(atDecision, 0)
        runAfterDecision()
        const told = records.find((r) => r.event === "tool_call")
        assert.ok(audited !== undefined && told !== undefined)
        // One record: the same seq and duration in the audit and in telemetry.
        assert.strictEqual(told, audited)
        assert.strictEqual(audited.duration_ms, 5)
      })
  )

  it.effect("the exporting tracer's dispatch span and child span are recorded after the decision, at its times", () =>
    Effect.gen(function* () {
      const { items, recorder } = exportingRecorder()
      const records: Array<AuditRecord> = []
      const { pushedAtDecision, pushedAfterATurn } = yield* underHost(
        Effect.gen(function* () {
          // The session's start, recorded before this call.
          runAfterDecision()
          const before = items.length
          const { atDecision: pushedAtDecision } = yield* callThenWait(() => items.length - before)
          // A real turn of the event loop, as a host waiting for its next event gives.
          yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
          return { pushedAtDecision, pushedAfterATurn: items.slice(before) }
        })
      ).pipe(Effect.provideService(TelemetrySink, sinkOf(records, true)), Effect.withTracer(recorder.tracer))
      assert.strictEqual(pushedAtDecision, 0)
      // The exchange's child span and the dispatch's span.
      assert.strictEqual(pushedAfterATurn.length, 2)
      const span = pushedAfterATurn.find(
        (x): x is ExportedSpan => x instanceof ExportedSpan && x.name === "abhed.tool_call"
      )
      assert.ok(span)
      assert.ok(span.status._tag === "Ended")
      if (span.status._tag === "Ended") {
        // Ended at the decision (5 ms after it began), not when it was recorded a second later.
        assert.strictEqual(span.status.endTime - span.startTime, BigInt(5_000_000))
      }
      // Its record, handed over before it ended, is on it.
      assert.strictEqual(span.record?.event, "tool_call")
      const child = pushedAfterATurn.find((x) => !(x instanceof ExportedSpan))
      assert.ok(child !== undefined && !(child instanceof ExportedSpan))
      assert.strictEqual(child.parent, span)
      assert.strictEqual(child.end - child.start, BigInt(5_000_000))
    })
  )

  it.effect("a host that dispatches without the event loop turning holds at most a bounded queue", () =>
    Effect.gen(function* () {
      // No extension: a dispatch does no I/O, and with no yield a loop of them never lets the event loop turn (as
      // `Effect.runSync` in a loop, or a scheduler that never yields, would). What waits for after the decision must
      // not grow with the loop: past a bound it is handed over at once, in order.
      const records: Array<AuditRecord> = []
      const calls = 3 * AfterDecisionCap
      const seen = yield* Effect.gen(function* () {
        const h = yield* ExtensionHost
        for (let i = 0; i < calls; i++) yield* h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: `c-${i}` })
        return records.filter((r) => r.event === "tool_call").map((r) => r.call_id)
      }).pipe(
        Effect.provideService(Scheduler.MaxOpsBeforeYield, Number.MAX_SAFE_INTEGER),
        Effect.provide(ExtensionHost.layerFake([], { sessionId: "s" })),
        Effect.provide(AuditLog.layerNone),
        Effect.provideService(TelemetrySink, sinkOf(records, true))
      )
      assert.isAtLeast(seen.length, calls - AfterDecisionCap)
      assert.deepStrictEqual(
        seen,
        seen.map((_, i) => `c-${i}`)
      )
    })
  )

  it.effect(
    "under a policy hook (the span in the fiber's context), the span ends after the decision, its record on it",
    () =>
      Effect.gen(function* () {
        const { items, recorder } = exportingRecorder()
        // The hook reads the dispatch's span as its parent, and makes a span of its own under it.
        const hook = {
          name: "h",
          decide: () => Effect.withSpan(Effect.succeed("abstain" as const), "hook")
        }
        const records: Array<AuditRecord> = []
        const { atDecision, after } = yield* Effect.gen(function* () {
          runAfterDecision()
          const before = items.length
          const { atDecision } = yield* callThenWait(() =>
            items.slice(before).map((x) => (x instanceof ExportedSpan ? x.name : "exchange"))
          )
          yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
          return { atDecision, after: items.slice(before) }
        }).pipe(
          Effect.provide(ExtensionHost.layerFake([slow], { sessionId: "s", policyHooks: [hook] })),
          Effect.provide(AuditLog.layerNone),
          Effect.provideService(TelemetrySink, sinkOf(records, true)),
          Effect.withTracer(recorder.tracer)
        )
        // The hook's own span ended as it returned; the dispatch's span not yet.
        assert.deepStrictEqual(atDecision, ["hook"])
        const span = after.find((x): x is ExportedSpan => x instanceof ExportedSpan && x.name === "abhed.tool_call")
        assert.ok(span)
        const hookSpan = after.find((x): x is ExportedSpan => x instanceof ExportedSpan && x.name === "hook")
        assert.ok(hookSpan !== undefined && hookSpan.parent._tag === "Some")
        if (hookSpan.parent._tag === "Some") assert.strictEqual(hookSpan.parent.value, span)
        assert.strictEqual(span.record?.event, "tool_call")
        if (span.status._tag === "Ended") assert.strictEqual(span.status.endTime - span.startTime, BigInt(5_000_000))
        else assert.fail("the dispatch's span did not end")
        const child = after.find((x) => !(x instanceof ExportedSpan))
        assert.ok(child !== undefined && !(child instanceof ExportedSpan) && child.parent === span)
      })
  )

  it.effect(
    "under a span of the caller's own (Effect.withSpan), the dispatch's span is its child, with its record",
    () =>
      Effect.gen(function* () {
        const { items, recorder } = exportingRecorder()
        const records: Array<AuditRecord> = []
        const { after, atDecision } = yield* Effect.gen(function* () {
          runAfterDecision()
          const before = items.length
          const { atDecision } = yield* Effect.withSpan(
            callThenWait(() => records.map((r) => r.event)),
            "turn"
          )
          yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
          return { after: items.slice(before), atDecision }
        }).pipe(
          Effect.provide(ExtensionHost.layerFake([slow], { sessionId: "s" })),
          Effect.provide(AuditLog.layerNone),
          Effect.provideService(TelemetrySink, sinkOf(records, true)),
          Effect.withTracer(recorder.tracer)
        )
        // Effect's own span (docs/embedding.md): ended, its record handed over, before the dispatch returned.
        assert.include(atDecision, "tool_call")
        const turn = after.find((x): x is ExportedSpan => x instanceof ExportedSpan && x.name === "turn")
        const span = after.find((x): x is ExportedSpan => x instanceof ExportedSpan && x.name === "abhed.tool_call")
        assert.ok(turn !== undefined && span !== undefined)
        assert.ok(span.parent._tag === "Some" && span.parent.value === turn)
        assert.strictEqual(span.record?.event, "tool_call")
        if (span.status._tag === "Ended") assert.strictEqual(span.status.endTime - span.startTime, BigInt(5_000_000))
        else assert.fail("the dispatch's span did not end")
        const child = after.find((x) => !(x instanceof ExportedSpan))
        assert.ok(child !== undefined && !(child instanceof ExportedSpan) && child.parent === span)
        assert.strictEqual(child.end - child.start, BigInt(5_000_000))
      })
  )

  it.live("a task that throws costs itself alone: the rest run, in order, in the turn after", () =>
    Effect.gen(function* () {
      const ran: Array<number> = []
      afterDecision(() => ran.push(1))
      afterDecision(() => {
        throw new Error("a record telemetry cannot take")
      })
      afterDecision(() => ran.push(3))
      assert.deepStrictEqual(ran, [])
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      assert.deepStrictEqual(ran, [1, 3])
    })
  )

  it.effect("an interrupted dispatch's span still ends, interrupted, at the time it was cut, with no record", () =>
    Effect.gen(function* () {
      const { items, recorder } = exportingRecorder()
      const started = yield* Deferred.make<void>()
      const hangs = FakeExtension.make("hangs", (r) =>
        r.event === "tool_call"
          ? Effect.andThen(Deferred.succeed(started, undefined), Effect.never)
          : Effect.succeed({})
      )
      const records: Array<AuditRecord> = []
      const span = yield* Effect.gen(function* () {
        const h = yield* ExtensionHost
        runAfterDecision()
        const before = items.length
        const call = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: "c-1" }))
        yield* Deferred.await(started)
        yield* TestClock.adjust("3 millis")
        yield* Fiber.interrupt(call)
        yield* TestClock.adjust("1 second")
        yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
        return items
          .slice(before)
          .find((x): x is ExportedSpan => x instanceof ExportedSpan && x.name === "abhed.tool_call")
      }).pipe(
        Effect.provide(ExtensionHost.layerFake([hangs], { sessionId: "s" })),
        Effect.provide(AuditLog.layerNone),
        Effect.provideService(TelemetrySink, sinkOf(records, true)),
        Effect.withTracer(recorder.tracer)
      )
      assert.ok(span)
      if (span.status._tag !== "Ended") return assert.fail("the interrupted dispatch's span did not end")
      assert.isTrue(Exit.hasInterrupts(span.status.exit))
      assert.strictEqual(span.status.endTime - span.startTime, BigInt(3_000_000))
      assert.notInclude(
        records.map((r) => r.event),
        "tool_call"
      )
    })
  )
})
