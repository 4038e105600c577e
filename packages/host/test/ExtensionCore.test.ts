import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Scope } from "effect"
import * as ExtensionCore from "../src/ExtensionCore.ts"
import { ExtensionDead, ExtensionExited } from "../src/ExtensionError.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import { toolCallRequest } from "./FakeHost.ts"

/** The core over a transport the test drives by hand: it can write lines no request asked for. */
const manual = Effect.gen(function* () {
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
  Effect.gen(function* () {
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
  it.effect(
    "a dead extension refuses every request with the one error made for its death: same fields, same message",
    () =>
      Effect.gen(function* () {
        const { events, extension } = yield* manual
        events.fail(new ExtensionExited({ extension: "manual", code: 3, signal: null, stderr: "boom" }))
        const first = yield* Effect.flip(extension.send(toolCallRequest("r1")))
        const second = yield* Effect.flip(extension.send(toolCallRequest("r2")))
        let thirdError: unknown
        extension.beginNow?.(toolCallRequest("r3"))?.onDone((exit) => {
          thirdError = Exit.isFailure(exit) ? Cause.squash(exit.cause) : exit.value
        })
        const fields = (e: unknown) =>
          e instanceof ExtensionDead ? [e.extension, e.cause, e.stderr, e.message] : ["not ExtensionDead", e]
        assert.deepStrictEqual(fields(first), ["manual", "exited (code 3)", "boom", "manual: dead (exited (code 3))"])
        // Not one per refusal: each would run the error's checks and capture a stack.
        assert.strictEqual(second, first)
        assert.strictEqual(thirdError, first)
      })
  )

  it.effect("a death while the write waits for the event loop: the request is never written and fails with it", () =>
    Effect.gen(function* () {
      const { events, extension, turn, waitingWrites, written } = yield* waitingTransport()
      const fiber = yield* Effect.forkChild(extension.send(toolCallRequest("r1")), { startImmediately: true })
      assert.strictEqual(waitingWrites(), 1)
      events.fail(new ExtensionExited({ extension: "waiting", code: 1, signal: null }))
      turn()
      const exit = yield* Fiber.await(fiber)
      assert.deepStrictEqual(written, [])
      const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.strictEqual(error instanceof Error ? error.message : error, "waiting: dead (exited (code 1))")
    })
  )

  it.effect(
    "a caller interrupted while the write waits: the request is still written, and its reply is not the next one's",
    () =>
      Effect.gen(function* () {
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
      })
  )

  it.effect.each([
    [
      "a text banner before the reply",
      [
        { _tag: "Invalid", got: "invalid JSON", bytes: 14 },
        { _tag: "Json", value: {} }
      ],
      "(invalid JSON, 14 bytes)"
    ],
    [
      "a JSON banner before the reply",
      [
        { _tag: "Json", value: { ready: "yes" } },
        { _tag: "Json", value: {} }
      ],
      '{"<5 chars>":"<3 chars>"}'
    ],
    [
      "a debug line after the reply with the id",
      [
        { _tag: "Json", value: { id: "r1" } },
        { _tag: "Json", value: { debug: "x" } }
      ],
      '{"<5 chars>":"<1 chars>"}'
    ],
    [
      "an old reply before the reply with the id",
      [
        { _tag: "Json", value: { id: "r0" } },
        { _tag: "Json", value: { id: "r1" } }
      ],
      'reply to id "r0" while "r1" was in flight'
    ]
  ] as const)("a read with a line too many (%s): the cause names the stray line, not the reply", ([, lines, detail]) =>
    Effect.gen(function* () {
      const { events, extension } = yield* manual
      const fiber = yield* Effect.forkChild(extension.send(toolCallRequest("r1")), { startImmediately: true })
      yield* Effect.yieldNow
      events.read(lines)
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual((yield* extension.status).state, {
        _tag: "dead",
        cause: { _tag: "unsolicited_output", detail }
      })
    })
  )

  it.effect("a Blanks line from the reader (more than its bound of blank lines in a row): unsolicited output", () =>
    Effect.gen(function* () {
      const { events, extension } = yield* manual
      events.read([{ _tag: "Blanks", count: 1001 }])
      assert.deepStrictEqual((yield* extension.status).state, {
        _tag: "dead",
        cause: { _tag: "unsolicited_output", detail: "more than 1000 blank lines in a row" }
      })
    })
  )

  /**
   * A core subscribed to session_end over a transport that records what it writes and never answers, in a scope the
   * test closes. Timeouts of a minute: on the TestClock, a close that waited for one would never end.
   */
  const silent = Effect.gen(function* () {
    const scope = yield* Scope.make()
    const written: Array<string> = []
    const extension = yield* ExtensionCore.make({
      config: FakeExtension.config("silent", {
        events: ["tool_call", "session_end"],
        timeout_ms: 60_000,
        startup_timeout_ms: 60_000
      }),
      sessionId: "s",
      connect: () =>
        Effect.succeed({ ...ExtensionCore.deadTransport, write: (request) => void written.push(request.value.event) })
    }).pipe(Scope.provide(scope))
    /**
     * Close the scope in a fiber; whether it ended once the fibers that can run have run (no clock moves). Detached:
     * a close that waits for the clock must fail the test, not hang it.
     */
    const closes = Effect.gen(function* () {
      const closing = yield* Effect.forkDetach(Scope.close(scope, Exit.void), { startImmediately: true })
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      return closing.pollUnsafe() !== undefined
    })
    return { extension, written, closes }
  })

  it.effect(
    "closed while an interrupted caller's request is still unanswered: no session_end queued behind it, no wait",
    () =>
      Effect.gen(function* () {
        const { closes, extension, written } = yield* silent
        const caller = yield* Effect.forkChild(extension.send(toolCallRequest("r1")), { startImmediately: true })
        yield* Fiber.interrupt(caller) // Ctrl-C while the extension works on r1
        assert.deepStrictEqual(written, ["tool_call"])
        // Before, session_end waited for r1's permit (up to its timeout), then for its own reply (another timeout).
        assert.isTrue(yield* closes)
        assert.deepStrictEqual(written, ["tool_call"])
      })
  )

  it.effect("the same for a fan-out's exchange (beginNow) whose caller went away", () =>
    Effect.gen(function* () {
      const { closes, extension, written } = yield* silent
      const started = extension.beginNow?.(toolCallRequest("r1"))
      assert.isDefined(started)
      started?.abandon()
      assert.isTrue(yield* closes)
      assert.deepStrictEqual(written, ["tool_call"])
    })
  )

  it.effect("an interrupted caller's request answered before the close: session_end is sent as usual", () =>
    Effect.gen(function* () {
      const events = yield* Deferred.make<ExtensionCore.TransportEvents>()
      const scope = yield* Scope.make()
      const written: Array<string> = []
      const extension = yield* ExtensionCore.make({
        config: FakeExtension.config("late", {
          events: ["tool_call", "session_end"],
          timeout_ms: 60_000,
          startup_timeout_ms: 60_000
        }),
        sessionId: "s",
        connect: (e) =>
          Effect.as(Deferred.succeed(events, e), {
            ...ExtensionCore.deadTransport,
            write: (request) => void written.push(request.value.event)
          })
      }).pipe(Scope.provide(scope))
      const transport = yield* Deferred.await(events)
      const caller = yield* Effect.forkChild(extension.send(toolCallRequest("r1")), { startImmediately: true })
      yield* Fiber.interrupt(caller)
      transport.read([{ _tag: "Json", value: {} }]) // r1's reply, to the fiber it was handed to
      yield* Effect.yieldNow
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), { startImmediately: true })
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      assert.deepStrictEqual(written, ["tool_call", "session_end"])
      transport.read([{ _tag: "Json", value: {} }])
      yield* Fiber.join(closing)
    })
  )

  it.effect("a write that throws ends its request with the defect, and never throws into the event loop", () =>
    Effect.gen(function* () {
      const { extension, turn } = yield* waitingTransport({ writeThrows: true })
      const fiber = yield* Effect.forkChild(extension.send(toolCallRequest("r1")), { startImmediately: true })
      assert.doesNotThrow(turn)
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
    })
  )

  it.effect("an unsolicited line nested 100k deep kills the extension as unsolicited_output (no defect)", () =>
    Effect.gen(function* () {
      const { events, extension } = yield* manual
      let deep: unknown = 0
      for (let i = 0; i < 100_000; i++) deep = [deep]
      events.read([{ _tag: "Json", value: deep }])
      const status = yield* extension.status
      assert.strictEqual(
        status.state._tag === "dead" ? status.state.cause._tag : status.state._tag,
        "unsolicited_output"
      )
    })
  )
})
