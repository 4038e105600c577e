import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import type { ExtensionConfig } from "@abhed/protocol"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { expectFailure, fixtureConfig, timedSend, toolCall, withExtension } from "../support/extension-helpers.ts"

/**
 * docs/design.md#attribution over a real process, with the host's event loop held up: a stray line the extension
 * wrote before the next request was written is never that request's reply, even when the read callback would
 * only have delivered it after the write.
 */

/** Blocks this thread (no event loop turn) for `millis`: what a loaded machine or a long synchronous task does. */
const stall = (millis: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, millis)

/** Blocks this thread until `file` exists (bounded): no event loop turn meanwhile, however long it takes. */
const stallUntil = (file: string, maxMillis: number): boolean => {
  const deadline = Date.now() + maxMillis
  while (!NodeFs.existsSync(file) && Date.now() < deadline) stall(5)
  return NodeFs.existsSync(file)
}

/**
 * Runs `fixture` with the stray-line handshake: the first request is answered; then, with the event loop held up,
 * the extension writes its stray line, which sits in the pipe, unread, when the second request is written. A
 * handshake, not a delay: on a loaded machine a fixed 50 ms gap and 500 ms stall could put the stray line either
 * in the reply's read or after the next write. Returns how the second request failed and the extension's state.
 */
const strayAfterFirstReply = (fixture: string, overrides: Partial<ExtensionConfig>) => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-stray-"))
  const go = NodePath.join(dir, "go")
  const written = NodePath.join(dir, "written")
  return Effect.map(
    Effect.provide(
      withExtension(
        fixtureConfig(fixture, { timeout_ms: 5000, env: { GO: go, WRITTEN: written }, ...overrides }),
        (ext) =>
          Effect.gen(function* () {
            const first = yield* timedSend(ext, toolCall("c1"))
            assert.strictEqual(first.result._tag, "Success")
            NodeFs.writeFileSync(go, "")
            assert.isTrue(stallUntil(written, 30_000), "the fixture never wrote its stray line")
            const second = yield* timedSend(ext, toolCall("c2"))
            return { error: expectFailure(second.result), state: (yield* ext.status).state }
          })
      ),
      NodeServices.layer
    ),
    (closed) => closed.result
  )
}

describe("attribution with a stalled event loop (real process)", () => {
  it.live("a stray line already in the pipe when the next request is written kills the extension; never applied", () =>
    Effect.gen(function* () {
      // Without ids, only the event loop's poll before the write can tell the stray line from the second request's
      // reply (the host waits for one: PollBarrier).
      const { error, state } = yield* strayAfterFirstReply("ext-late-stray.sh", {})
      assert.deepStrictEqual(
        error._tag === "ExtensionDead" && error.cause,
        `unsolicited_output: {"reason":"<5 chars>"}`
      )
      assert.deepStrictEqual(state, {
        _tag: "dead",
        cause: { _tag: "unsolicited_output", detail: `{"reason":"<5 chars>"}` }
      })
    })
  )

  it.live("with reply_ids required (written at once), the stray line's id gives it away; never applied", () =>
    Effect.gen(function* () {
      // The stray line is read after the second request was written: alone, or, when the extension answers fast
      // enough, in one read with the real reply (the read has a line too many). Either way the second request fails
      // with unsolicited output naming the stray line (never the real reply), and no line of it is applied.
      const { error, state } = yield* strayAfterFirstReply("ext-late-stray-ids.sh", { reply_ids: "required" })
      const detail = error._tag === "UnsolicitedOutput" ? error.line : `not unsolicited output: ${error._tag}`
      assert.strictEqual(detail, `reply to id "c1" while "c2" was in flight`)
      assert.deepStrictEqual(state, { _tag: "dead", cause: { _tag: "unsolicited_output", detail } })
    })
  )
})
