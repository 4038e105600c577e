import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import * as ExtensionCore from "../src/ExtensionCore.ts"
import * as FakeExtension from "../src/FakeExtension.ts"

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

describe("ExtensionCore", () => {
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
