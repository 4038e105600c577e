import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as FakeExtension from "../src/FakeExtension.ts"
import { AuditLog, ExtensionHost } from "../src/index.ts"
import { withHost } from "./FakeHost.ts"

/**
 * A round (to one subscriber or several) begins every exchange in one synchronous step and waits for all replies in
 * one callback (Round.ts `exchanges`). It keeps `send`'s guarantees: an interrupted caller hands its exchanges
 * over and each keeps its extension's permit until its reply, later requests queue FIFO, and a hung subscriber
 * times out on the Clock while the others' replies count.
 */
describe("fan-out without a fiber per subscriber", () => {
  it.effect("an interrupted round keeps the permit until the late reply: the next round never gets it", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const seenFirst = yield* Deferred.make<void>()
      // "late" answers the first tool_call only when the gate opens, and says which call each reply is for.
      const lateHandler = FakeExtension.make(
        "late",
        (req) =>
          req.event !== "tool_call"
            ? Effect.succeed({})
            : req.call_id === "c1"
              ? Effect.andThen(
                  Deferred.succeed(seenFirst, undefined),
                  Effect.as(Deferred.await(gate), { block: true, reason: "c1" })
                )
              : Effect.succeed({ block: true, reason: req.call_id }),
        { events: ["tool_call"] }
      )
      const quick = FakeExtension.fromReplies("quick", { tool_call: () => ({}) })
      yield* withHost([lateHandler, quick], (h) =>
        Effect.gen(function* () {
          const first = yield* Effect.forkChild(h.toolCall({ call_id: "c1", tool: "bash", args: {} }))
          yield* Deferred.await(seenFirst)
          // Let the round reach its wait for the replies (a fiber may yield between beginning and waiting).
          for (let i = 0; i < 10; i++) yield* Effect.yieldNow
          yield* Fiber.interrupt(first)
          // "late" still has c1 in flight: c2 must wait for its reply, not take it.
          const second = yield* Effect.forkChild(h.toolCall({ call_id: "c2", tool: "bash", args: {} }))
          yield* Effect.yieldNow
          assert.isUndefined(second.pollUnsafe())
          yield* Deferred.succeed(gate, undefined)
          const outcome = yield* Fiber.join(second)
          assert.strictEqual(outcome.decision, "deny")
          assert.deepStrictEqual(outcome.reasons, [{ extension: "late", reason: "c2" }])
          // And the round after it begins at once again (both permits free), still in name order.
          const third = yield* h.toolCall({ call_id: "c3", tool: "bash", args: {} })
          assert.deepStrictEqual(third.reasons, [{ extension: "late", reason: "c3" }])
        })
      )
    })
  )

  it.effect("a hung subscriber times out on the Clock; the others' replies still count", () =>
    withHost(
      [
        FakeExtension.make("hung", (req) => (req.event === "tool_call" ? Effect.never : Effect.succeed({})), {
          timeout_ms: 1000
        }),
        FakeExtension.fromReplies("guard", { tool_call: () => ({ block: true, reason: "no" }) })
      ],
      (h) =>
        Effect.gen(function* () {
          const round = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: {} }))
          yield* TestClock.adjust("999 millis")
          assert.isUndefined(round.pollUnsafe())
          yield* TestClock.adjust("1 millis")
          const outcome = yield* Fiber.join(round)
          assert.strictEqual(outcome.decision, "deny")
          assert.deepStrictEqual(outcome.reasons, [{ extension: "guard", reason: "no" }])
          const hung = yield* h.status
          assert.deepStrictEqual(hung.find((x) => x.name === "hung")?.state._tag, "dead")
        })
    )
  )

  // One subscriber begins at once too. The round begins and listens in one step: a caller interrupted by what the
  // write set off (here the handler wakes the caller's parent, which interrupts it at once) abandons the exchange
  // rather than leave it unheard, so it counts as orphaned and the close does not queue session_end behind it.
  for (const subscribers of [1, 2]) {
    it.effect(
      `${subscribers} subscriber(s): a caller interrupted as its round begins leaves nothing for the close to wait on`,
      () =>
        Effect.gen(function* () {
          const received = yield* Deferred.make<void>()
          const stuck = FakeExtension.make(
            "stuck",
            (req) =>
              req.event === "tool_call"
                ? Effect.andThen(Deferred.succeed(received, undefined), Effect.never)
                : Effect.succeed({}),
            { timeout_ms: 1000 }
          )
          const fakes = subscribers === 1 ? [stuck] : [stuck, FakeExtension.fromReplies("quick", {})]
          const scope = yield* Scope.make()
          const h = yield* Effect.flatMap(Effect.all(fakes), (xs) => ExtensionHost.make(xs, { sessionId: "s-1" })).pipe(
            Scope.provide(scope)
          )
          const call = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: {} }))
          yield* Deferred.await(received)
          yield* Fiber.interrupt(call)
          const close = yield* Effect.forkChild(Scope.close(scope, Exit.void))
          for (let i = 0; i < 1000 && close.pollUnsafe() === undefined; i++) yield* Effect.yieldNow
          const closedAtOnce = close.pollUnsafe() !== undefined
          // Else it waits for the stuck exchange's timeout (on the Clock): let it end, then fail.
          yield* TestClock.adjust("1 second")
          yield* Fiber.join(close)
          assert.isTrue(closedAtOnce)
        }).pipe(Effect.provide(AuditLog.layerMemory))
    )
  }
})
