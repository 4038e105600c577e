import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber } from "effect"
import * as ExtensionCore from "../src/ExtensionCore.ts"
import { ExtensionExited } from "../src/ExtensionError.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import { toolCallRequest } from "./FakeHost.ts"

/** The core over a transport the test drives by hand: it can write lines no request asked for. */
const manual = Effect.gen(function*() {
  const events = yield* Deferred.make<ExtensionCore.TransportEvents>()
  const extension = yield* ExtensionCore.make({
    // No session_end at close: on the TestClock, a transport that never replies would wait for it forever.
    config: FakeExtension.config("manual", { events: ["tool_call"] }),
    sessionId: "s",
    connect: (e) => Effect.as(Deferred.succeed(events, e), ExtensionCore.deadTransport)
  })
  return { extension, events: yield* Deferred.await(events) }
})

/**
 * The core over a transport whose writes wait for the test (as a process's wait for the event loop's next poll,
 * `catchUp`): `turn()` runs the writes that waited. `write` may be made to throw.
 */
const waitingTransport = (options: { readonly writeThrows?: boolean } = {}) =>
  Effect.gen(function*() {
    const events = yield* Deferred.make<ExtensionCore.TransportEvents>()
    const written: Array<string> = []
    let waiting: Array<() => void> = []
    const extension = yield* ExtensionCore.make({
      config: FakeExtension.config("waiting", { events: ["tool_call"] }),
      sessionId: "s",
      connect: (e) =>
        Effect.as(Deferred.succeed(events, e), {
          ...ExtensionCore.deadTransport,
          write: (request) => {
            if (options.writeThrows === true) throw new Error("the pipe's write threw")
            written.push(request.value.id)
          },
          catchUp: (then) => void waiting.push(then)
        } satisfies ExtensionCore.Transport)
    })
    const turn = () => {
      const writes = waiting
      waiting = []
      for (const write of writes) write()
    }
    return { extension, events: yield* Deferred.await(events), written, turn, waitingWrites: () => waiting.length }
  })

describe("ExtensionCore", () => {
  it.effect("a death while the write waits for the event loop: the request is never written and fails with it", () =>
    Effect.gen(function*() {
      const { events, extension, turn, waitingWrites, written } = yield* waitingTransport()
      const fiber = yield* Effect.forkChild(extension.send(toolCallRequest("r1")), { startImmediately: true })
      assert.strictEqual(waitingWrites(), 1)
      events.fail(new ExtensionExited({ extension: "waiting", code: 1, signal: null }))
      turn()
      const exit = yield* Fiber.await(fiber)
      assert.deepStrictEqual(written, [])
      const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.strictEqual(error instanceof Error ? error.message : error, "waiting: dead (exited (code 1))")
    }))

  it.effect("a caller interrupted while the write waits: the request is still written, and its reply is not the next one's", () =>
    Effect.gen(function*() {
      const { events, extension, turn, written } = yield* waitingTransport()
      const first = yield* Effect.forkChild(extension.send(toolCallRequest("r1")), { startImmediately: true })
      yield* Fiber.interrupt(first)
      turn()
      assert.deepStrictEqual(written, ["r1"])
      // The second request waits for the permit, which the first keeps until its reply.
      const second = yield* Effect.forkChild(extension.send(toolCallRequest("r2")), { startImmediately: true })
      events.read([{ _tag: "Json", value: { reason: "the first reply" } }])
      yield* Effect.yieldNow
      turn()
      assert.deepStrictEqual(written, ["r1", "r2"])
      events.read([{ _tag: "Json", value: { block: true, reason: "the second reply" } }])
      const reply = yield* Fiber.join(second)
      assert.deepStrictEqual(reply.reply, { block: true, reason: "the second reply" })
      assert.strictEqual((yield* extension.status).state._tag, "live")
    }))

  it.effect("a write that throws ends its request with the defect, and never throws into the event loop", () =>
    Effect.gen(function*() {
      const { extension, turn } = yield* waitingTransport({ writeThrows: true })
      const fiber = yield* Effect.forkChild(extension.send(toolCallRequest("r1")), { startImmediately: true })
      assert.doesNotThrow(turn)
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
    }))

  it.effect("an unsolicited line nested 100k deep kills the extension as unsolicited_output (no defect)", () =>
    Effect.gen(function*() {
      const { events, extension } = yield* manual
      let deep: unknown = 0
      for (let i = 0; i < 100_000; i++) deep = [deep]
      events.read([{ _tag: "Json", value: deep }])
      const status = yield* extension.status
      assert.strictEqual(status.state._tag === "dead" ? status.state.cause._tag : status.state._tag, "unsolicited_output")
    }))
})
