import type { Request } from "@abhed/protocol"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Ref, Scope } from "effect"
import { TestClock } from "effect/testing"
import type { Extension } from "../src/Extension.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import { encodeRequest as encode, toolCallRequest as toolCall } from "./FakeHost.ts"

const stateTag = (ext: Extension) => Effect.map(ext.status, (s) => s.state._tag)

describe("FakeExtension", () => {
  it.effect("fromReplies answers per event, {} for the rest, and counts served requests", () =>
    Effect.gen(function* () {
      const ext = yield* FakeExtension.fromReplies("guard", {
        tool_call: (req) => ({ block: req.args["command"] === "ls", reason: "no ls" })
      })
      assert.strictEqual(yield* stateTag(ext), "starting")
      const r = yield* ext.send(toolCall("c1"))
      assert.deepStrictEqual(r.reply, { block: true, reason: "no ls" })
      const other = yield* ext.send(encode<"list_tools">({ event: "list_tools", session_id: "s", id: "r-list" }))
      assert.deepStrictEqual(other.reply, {})
      const status = yield* ext.status
      assert.strictEqual(status.served, 2)
      assert.deepStrictEqual(status.state, { _tag: "live" })
      assert.strictEqual(status.stderr_tail, "")
      assert.strictEqual(status.pid, undefined)
    })
  )

  it.effect("serializes requests: one in flight, FIFO, each reply matched to its request", () =>
    Effect.gen(function* () {
      const active = yield* Ref.make(0)
      const maxActive = yield* Ref.make(0)
      const seen: Array<string> = []
      const ext = yield* FakeExtension.make("slow", (req) =>
        Effect.gen(function* () {
          const n = yield* Ref.updateAndGet(active, (a) => a + 1)
          yield* Ref.update(maxActive, (m) => Math.max(m, n))
          const id = req.event === "tool_call" ? req.call_id : "?"
          seen.push(id)
          yield* Effect.yieldNow
          yield* Ref.update(active, (a) => a - 1)
          return { reason: id }
        })
      )
      const ids = Array.from({ length: 20 }, (_, i) => `c${i}`)
      const replies = yield* Effect.forEach(ids, (id) => ext.send(toolCall(id)), { concurrency: "unbounded" })
      assert.deepStrictEqual(
        replies.map((r) => r.reply.reason),
        ids
      )
      assert.deepStrictEqual(seen, ids)
      assert.strictEqual(yield* Ref.get(maxActive), 1)
    })
  )

  it.effect("a hung fake times out on the clock (startup timeout first), dies, and is never written again", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const interrupted = yield* Deferred.make<void>()
      const ext = yield* FakeExtension.make(
        "hang",
        () =>
          Ref.update(calls, (n) => n + 1).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          ),
        { startup_timeout_ms: 2000, timeout_ms: 500 }
      )
      const fiber = yield* ext.send(toolCall("c1")).pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("1999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "ExtensionTimeout")
      assert.deepStrictEqual(error._tag === "ExtensionTimeout" && error.timeout_ms, 2000)
      // Death terminates it: the handler in flight is interrupted.
      yield* Deferred.await(interrupted)
      assert.deepStrictEqual((yield* ext.status).state, {
        _tag: "dead",
        cause: { _tag: "timed_out", timeout_ms: 2000 }
      })
      const again = yield* Effect.flip(ext.send(toolCall("c2")))
      assert.strictEqual(again._tag, "ExtensionDead")
      assert.strictEqual(again._tag === "ExtensionDead" && again.cause, "timed_out (2000 ms)")
      assert.strictEqual(yield* Ref.get(calls), 1)
    })
  )

  it.effect("startup_timeout_ms applies to the first exchange only; timeout_ms counts from the write", () =>
    Effect.gen(function* () {
      const delays = [1500, 800, 800, 1200]
      let i = 0
      const ext = yield* FakeExtension.make(
        "slowish",
        () => Effect.as(Effect.sleep(`${delays[i++] ?? 0} millis`), {}),
        { startup_timeout_ms: 2000, timeout_ms: 1000 }
      )
      // 1500 ms > timeout_ms, but the first exchange gets startup_timeout_ms.
      const first = yield* ext.send(toolCall("c1")).pipe(Effect.forkChild)
      yield* TestClock.adjust("1500 millis")
      yield* Fiber.join(first)
      // Two queued requests of 800 ms each: the second waits 800 ms for its turn, and still has its full second.
      const both = yield* Effect.all([ext.send(toolCall("c2")), ext.send(toolCall("c3"))], { concurrency: 2 }).pipe(
        Effect.forkChild
      )
      yield* TestClock.adjust("1600 millis")
      yield* Fiber.join(both)
      const last = yield* ext.send(toolCall("c4")).pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("1000 millis")
      const error = yield* Fiber.join(last)
      assert.deepStrictEqual(error._tag === "ExtensionTimeout" && error.timeout_ms, 1000)
      assert.strictEqual((yield* ext.status).served, 3)
    })
  )

  it.effect("a request due before the one the timer is set for still times out on its own deadline", () =>
    Effect.gen(function* () {
      // The first exchange arms the timer for its startup deadline (10 s); it answers at once. The second hangs
      // and is due 1 s after its write, long before 10 s: it must time out at 1 s, not when the timer next looks.
      let calls = 0
      const ext = yield* FakeExtension.make(
        "early",
        () => (calls++ === 0 ? Effect.as(Effect.sleep("10 millis"), {}) : Effect.never),
        { startup_timeout_ms: 10_000, timeout_ms: 1000 }
      )
      const first = yield* ext.send(toolCall("c1")).pipe(Effect.forkChild)
      yield* TestClock.adjust("10 millis")
      yield* Fiber.join(first)
      const second = yield* ext.send(toolCall("c2")).pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(second.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(second)
      assert.deepStrictEqual(error._tag === "ExtensionTimeout" && error.timeout_ms, 1000)
    })
  )

  it.effect("a malformed reply (wrong field type) kills it: MalformedReply names the field", () =>
    Effect.gen(function* () {
      const ext = yield* FakeExtension.fromReplies("bad", { tool_call: () => ({ block: "yes" }) })
      const error = yield* Effect.flip(ext.send(toolCall("c1")))
      assert.strictEqual(error._tag, "MalformedReply")
      assert.strictEqual(error._tag === "MalformedReply" && error.path, "block")
      const status = yield* ext.status
      assert.strictEqual(status.state._tag === "dead" && status.state.cause._tag, "malformed_reply")
      assert.strictEqual((yield* Effect.flip(ext.send(toolCall("c2"))))._tag, "ExtensionDead")
    })
  )

  it.effect("a reply that is not an object is malformed", () =>
    Effect.gen(function* () {
      for (const raw of [[1, 2], 42, "ok", null, true]) {
        const ext = yield* FakeExtension.fromReplies("bad", { tool_call: () => raw })
        const error = yield* Effect.flip(ext.send(toolCall("c1")))
        assert.strictEqual(error._tag, "MalformedReply")
        assert.strictEqual(error._tag === "MalformedReply" && error.path, "")
      }
    })
  )

  it.effect("a fake exit is ExtensionExited, with code or signal", () =>
    Effect.gen(function* () {
      const byCode = yield* FakeExtension.make("crash", () => FakeExtension.FakeExit.code(3))
      const e1 = yield* Effect.flip(byCode.send(toolCall("c1")))
      assert.deepStrictEqual(e1._tag === "ExtensionExited" && [e1.code, e1.signal], [3, null])
      assert.deepStrictEqual((yield* byCode.status).state, {
        _tag: "dead",
        cause: { _tag: "exited", code: 3, signal: null }
      })
      const bySignal = yield* FakeExtension.make("killed", () => FakeExtension.FakeExit.signal("SIGKILL"))
      const e2 = yield* Effect.flip(bySignal.send(toolCall("c1")))
      assert.deepStrictEqual(e2._tag === "ExtensionExited" && [e2.code, e2.signal], [null, "SIGKILL"])
    })
  )

  it.effect("session_end is sent on release to subscribers only", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const record = (req: Request) => Effect.sync(() => (seen.push(`${req.session_id}:${req.event}`), {}))
      const scope = yield* Scope.make()
      const all = yield* FakeExtension.make("all", record, {}, { sessionId: "s-9" }).pipe(Scope.provide(scope))
      yield* FakeExtension.make("only-tools", record, { events: ["tool_call"] }).pipe(Scope.provide(scope))
      yield* all.send(toolCall("c1"))
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(seen, ["s:tool_call", "s-9:session_end"])
    })
  )

  it.effect("session_end on release is bounded by timeout_ms", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      yield* FakeExtension.make("hang", () => Effect.never, { timeout_ms: 300 }).pipe(Scope.provide(scope))
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.forkChild)
      yield* TestClock.adjust("300 millis")
      yield* Fiber.join(closing)
    })
  )

  it.effect("a caller that gives up does not desynchronize the stream: the reply is still consumed", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const ext = yield* FakeExtension.make("gated", (req) =>
        req.event === "tool_call" && req.call_id === "c1"
          ? Effect.as(Deferred.await(gate), { reason: "c1" })
          : Effect.succeed({ reason: req.event === "tool_call" ? req.call_id : "" })
      )
      const first = yield* ext.send(toolCall("c1")).pipe(Effect.forkChild({ startImmediately: true }))
      yield* Fiber.interrupt(first)
      const second = yield* ext.send(toolCall("c2")).pipe(Effect.forkChild({ startImmediately: true }))
      yield* Deferred.succeed(gate, undefined)
      const r = yield* Fiber.join(second)
      assert.strictEqual(r.reply.reason, "c2")
      const status = yield* ext.status
      assert.strictEqual(status.served, 2)
      assert.deepStrictEqual(status.state, { _tag: "live" })
    })
  )
})
