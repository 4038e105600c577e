import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { expectFailure, fixtureConfig, timedSend, toolCall, withExtension } from "./extension-helpers.ts"

/**
 * DESIGN §4 attribution over a real process, with the host's event loop held up: a stray line the extension
 * wrote before the next request was written is never that request's reply, even when the read callback would
 * only have delivered it after the write.
 */

/** Blocks this thread (no event loop turn) for `millis`: what a loaded machine or a long synchronous task does. */
const stall = (millis: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, millis)

describe("attribution with a stalled event loop (real process)", () => {
  it.live("a stray line already in the pipe when the next request is written kills the extension; never applied", () =>
    Effect.asVoid(Effect.provide(
      withExtension(fixtureConfig("ext-late-stray.sh", { timeout_ms: 5000 }), (ext) =>
        Effect.gen(function*() {
          const first = yield* timedSend(ext, toolCall("c1"))
          assert.strictEqual(first.result._tag, "Success")
          // The stray line is written 50 ms after the reply; the event loop does not turn for 500 ms, so the
          // stray line sits in the pipe, unread, when the next request is written.
          stall(500)
          const second = yield* timedSend(ext, toolCall("c2"))
          const error = expectFailure(second.result)
          assert.deepStrictEqual(error._tag === "ExtensionDead" && error.cause, `unsolicited_output: {"reason":"stray"}`)
          assert.deepStrictEqual((yield* ext.status).state, {
            _tag: "dead",
            cause: { _tag: "unsolicited_output", detail: `{"reason":"stray"}` }
          })
        })),
      NodeServices.layer
    )))
})
