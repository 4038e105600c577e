import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as FakeExtension from "../src/FakeExtension.ts"
import { withHost } from "./FakeHost.ts"

/**
 * A round to several subscribers begins every exchange in one synchronous step and waits for all replies in one
 * callback (ExtensionHost `fanOutNow`). It keeps `send`'s guarantees: an interrupted caller hands its exchanges
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
})
