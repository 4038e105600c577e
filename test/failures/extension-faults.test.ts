import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import {
  awaitDeath,
  expectFailure,
  fixtureConfig,
  isLive,
  timedSend,
  toolCall,
  withExtension,
  within
} from "../support/extension-helpers.ts"

/**
 * One real misbehaving process per fault (fixtures in bash+jq, python3 and node). For each: `send` fails with a
 * typed error (never a defect), the death cause is the right one, and nothing of the process group survives the
 * scope (checked by `withExtension`). Fixtures get patient timeouts (`fixtureConfig`), so a slow start is never
 * mistaken for a hang; only the hang test sets a short one. Time is asserted where it is the point, loosely.
 */

/** The hang test's startup timeout: short, since the fixture never replies. */
const STARTUP = 1000
/** fixtureConfig's grace. */
const GRACE = 300

const live = (name: string, body: () => Effect.Effect<void, unknown, never>, timeout?: number) =>
  it.live(name, body, timeout)
const provided = <A, E>(effect: Effect.Effect<A, E, NodeServices.NodeServices>) =>
  Effect.asVoid(Effect.provide(effect, NodeServices.layer))

const tempLog = () => NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-ext-")), "read.log")
const readLines = (file: string) =>
  NodeFs.existsSync(file)
    ? NodeFs.readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "")
    : []

// Each test has its own process and group, and many wait (a timeout, graces, an interpreter's start): they run at
// once. The two that move tens of MiB through this process run alone, after them: one measures its memory.
describe.concurrent("process extension faults", () => {
  live("exits at start: dead with exited(code 3)", () =>
    provided(
      withExtension(fixtureConfig("ext-exit-at-start.sh"), (ext) =>
        Effect.gen(function* () {
          const { result } = yield* timedSend(ext, toolCall("c1"))
          const error = expectFailure(result)
          // Depending on when the exit is seen, the request is in flight (ExtensionExited) or refused (ExtensionDead).
          assert.include(["ExtensionExited", "ExtensionDead"], error._tag)
          const status = yield* ext.status
          // The cause carries what it said on stderr before it died (its last line that is not a stack frame).
          assert.deepStrictEqual(status.state, {
            _tag: "dead",
            cause: { _tag: "exited", code: 3, signal: null, stderr: "ext-exit-at-start: bye" }
          })
          assert.include(status.stderr_tail, "ext-exit-at-start: bye")
        })
      )
    )
  )

  for (const [file, line] of [
    ["ext-esm-in-cjs.cjs", "SyntaxError: Cannot use import statement outside a module"],
    ["ext-missing-module.py", "ModuleNotFoundError: No module named 'abhed_no_such_module'"]
  ] as const) {
    live(`dies at start (${file}): the cause carries the error line of its stderr, not a stack frame`, () =>
      provided(
        withExtension(fixtureConfig(file), (ext) =>
          Effect.gen(function* () {
            const status = yield* awaitDeath(ext)
            assert.deepStrictEqual(status.state, {
              _tag: "dead",
              cause: { _tag: "exited", code: 1, signal: null, stderr: line }
            })
            // Later requests get it too, apart from the cause text (which the model may read).
            const error = yield* Effect.flip(ext.send(toolCall("c1")))
            assert.deepStrictEqual(error._tag === "ExtensionDead" && [error.cause, error.stderr], [
              "exited (code 1)",
              line
            ])
          })
        )
      )
    )
  }

  live("command not found: acquisition succeeds, the extension is dead with spawn_failed", () =>
    provided(
      withExtension(fixtureConfig("x.sh", { command: "/nonexistent/abhed-no-such-command", args: [] }), (ext) =>
        Effect.gen(function* () {
          const status = yield* ext.status
          assert.strictEqual(status.pid, undefined)
          assert.strictEqual(status.state._tag === "dead" && status.state.cause._tag, "spawn_failed")
          const { millis, result } = yield* timedSend(ext, toolCall("c1"))
          const error = expectFailure(result)
          assert.strictEqual(error._tag, "ExtensionDead")
          assert.match(error._tag === "ExtensionDead" ? error.cause : "", /^spawn_failed: .*abhed-no-such-command/)
          // Refused at once: nothing to wait for (the timeout would be seconds).
          assert.isBelow(millis, within(10))
        })
      )
    )
  )

  live("a script without its executable bit is spawn_failed, saying what to do (Node says only EACCES)", () =>
    Effect.gen(function* () {
      const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-noexec-"))
      const script = NodePath.join(dir, "guard.sh")
      NodeFs.writeFileSync(script, "#!/bin/bash\ncat\n", { mode: 0o644 })
      yield* Effect.ensuring(
        provided(
          withExtension(fixtureConfig("ext-echo.sh", { command: script, args: [] }), (ext) =>
            Effect.gen(function* () {
              const state = (yield* ext.status).state
              const cause = state._tag === "dead" ? state.cause : undefined
              assert.strictEqual(cause?._tag, "spawn_failed")
              assert.include(
                cause?._tag === "spawn_failed" ? cause.detail : "",
                `not an executable file: \`chmod +x\` a script that starts with #!, or start it through its ` +
                  `interpreter: bash ${script}`
              )
            })
          )
        ),
        Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
      )
    })
  )

  live("a cwd that does not exist is spawn_failed too, saying so (Node's own error blames the command)", () =>
    provided(
      withExtension(fixtureConfig("ext-echo.sh", { cwd: "no-such-dir" }), (ext) =>
        Effect.gen(function* () {
          const status = yield* ext.status
          assert.strictEqual(status.state._tag === "dead" && status.state.cause._tag, "spawn_failed")
          const cause = status.state._tag === "dead" ? status.state.cause : undefined
          const detail = cause?._tag === "spawn_failed" ? cause.detail : ""
          assert.match(
            detail,
            /its working directory \S*no-such-dir does not exist \(cwd, relative to the config's folder\)$/
          )
        })
      )
    )
  )

  live("crashes mid-request: ExtensionExited(code 7)", () =>
    provided(
      withExtension(fixtureConfig("ext-crash.py"), (ext) =>
        Effect.gen(function* () {
          const { result } = yield* timedSend(ext, toolCall("c1"))
          const error = expectFailure(result)
          assert.deepStrictEqual(error._tag === "ExtensionExited" && [error.code, error.signal], [7, null])
          assert.deepStrictEqual((yield* ext.status).state, {
            _tag: "dead",
            cause: { _tag: "exited", code: 7, signal: null }
          })
        })
      )
    )
  )

  live("killed by a signal mid-request: ExtensionExited(signal SIGKILL)", () =>
    provided(
      withExtension(fixtureConfig("ext-crash.py", { env: { CRASH_SIGNAL: "1" } }), (ext) =>
        Effect.gen(function* () {
          const error = expectFailure((yield* timedSend(ext, toolCall("c1"))).result)
          assert.deepStrictEqual(error._tag === "ExtensionExited" && [error.code, error.signal], [null, "SIGKILL"])
        })
      )
    )
  )

  live("hangs: timed out, its group killed (SIGKILL after an ignored SIGTERM), never written to again", () => {
    const log = tempLog()
    return provided(
      Effect.gen(function* () {
        const closed = yield* withExtension(
          fixtureConfig("ext-hang.mjs", { startup_timeout_ms: STARTUP, env: { ABHED_FIXTURE_LOG: log } }),
          (ext) =>
            Effect.gen(function* () {
              const first = yield* timedSend(ext, toolCall("c1"))
              const error = expectFailure(first.result)
              // The first exchange gets startup_timeout_ms.
              assert.deepStrictEqual(error._tag === "ExtensionTimeout" && error.timeout_ms, STARTUP)
              assert.isAtLeast(first.millis, STARTUP - 20)
              assert.isBelow(first.millis, within(STARTUP))
              // The process ignores SIGTERM, so it is alive for the grace: a second write would be logged.
              const second = yield* timedSend(ext, toolCall("c2"))
              const dead = expectFailure(second.result)
              assert.strictEqual(dead._tag, "ExtensionDead")
              assert.strictEqual(dead._tag === "ExtensionDead" && dead.cause, `timed_out (${STARTUP} ms)`)
              assert.isBelow(second.millis, within(10)) // refused at once, not after a timeout
            })
        )
        const lines = readLines(log)
        assert.strictEqual(lines.length, 1, `the fixture read: ${lines.join(" / ")}`)
        assert.include(lines[0] ?? "", '"call_id":"c1"')
        assert.deepStrictEqual(closed.status.state, { _tag: "dead", cause: { _tag: "timed_out", timeout_ms: STARTUP } })
      })
    )
  })

  live("a line that is not JSON: MalformedReply (one JSON object per line)", () =>
    provided(
      withExtension(fixtureConfig("ext-garbage.sh"), (ext) =>
        Effect.gen(function* () {
          const error = expectFailure((yield* timedSend(ext, toolCall("c1"))).result)
          assert.strictEqual(error._tag, "MalformedReply")
          if (error._tag === "MalformedReply") {
            assert.deepStrictEqual(
              [error.event, error.path, error.expected, error.got],
              ["tool_call", "", "one JSON object per line", "invalid JSON"]
            )
          }
          const status = yield* ext.status
          assert.strictEqual(status.state._tag === "dead" && status.state.cause._tag, "malformed_reply")
        })
      )
    )
  )

  live("JSON that is not an object: MalformedReply", () =>
    provided(
      withExtension(fixtureConfig("ext-non-object.sh"), (ext) =>
        Effect.gen(function* () {
          const error = expectFailure((yield* timedSend(ext, toolCall("c1"))).result)
          assert.deepStrictEqual(error._tag === "MalformedReply" && [error.path, error.expected], ["", "a JSON object"])
        })
      )
    )
  )

  live("a known field of the wrong type: MalformedReply naming the field", () =>
    provided(
      withExtension(fixtureConfig("ext-wrong-types.sh"), (ext) =>
        Effect.gen(function* () {
          const error = expectFailure((yield* timedSend(ext, toolCall("c1"))).result)
          assert.deepStrictEqual(error._tag === "MalformedReply" && [error.path, error.expected], ["block", "boolean"])
          assert.strictEqual((yield* Effect.flip(ext.send(toolCall("c2"))))._tag, "ExtensionDead")
        })
      )
    )
  )

  live("half a line then exit: exited, not a reply", () =>
    provided(
      withExtension(fixtureConfig("ext-partial-exit.py"), (ext) =>
        Effect.gen(function* () {
          const error = expectFailure((yield* timedSend(ext, toolCall("c1"))).result)
          assert.deepStrictEqual(error._tag === "ExtensionExited" && error.code, 4)
        })
      )
    )
  )

  live("maxLineBytes is configurable", () =>
    provided(
      withExtension(
        fixtureConfig("ext-long-line.mjs", { env: { LINE_BYTES: "4096" } }),
        (ext) =>
          Effect.gen(function* () {
            const error = expectFailure((yield* timedSend(ext, toolCall("c1"))).result)
            assert.deepStrictEqual(error._tag === "ReplyTooLong" && error.max_line_bytes, 1024)
          }),
        { maxLineBytes: 1024 }
      )
    )
  )

  live("two replies to one request in one write: unsolicited output, and neither line is applied", () =>
    provided(
      withExtension(fixtureConfig("ext-two-replies.sh"), (ext) =>
        Effect.gen(function* () {
          // One write, so one read with two complete lines while one request is in flight (docs/design.md#failures).
          const first = yield* timedSend(ext, toolCall("c1"))
          const error = expectFailure(first.result)
          assert.strictEqual(error._tag, "UnsolicitedOutput")
          const status = yield* awaitDeath(ext)
          assert.deepStrictEqual(status.state, { _tag: "dead", cause: { _tag: "unsolicited_output", detail: "{}" } })
          assert.strictEqual((yield* Effect.flip(ext.send(toolCall("c2"))))._tag, "ExtensionDead")
        })
      )
    )
  )

  live("output before any request is unsolicited", () =>
    provided(
      withExtension(fixtureConfig("ext-early-output.sh"), (ext) =>
        Effect.gen(function* () {
          const status = yield* awaitDeath(ext)
          assert.strictEqual(status.state._tag === "dead" && status.state.cause._tag, "unsolicited_output")
          const error = yield* Effect.flip(ext.send(toolCall("c1")))
          assert.strictEqual(error._tag === "ExtensionDead" && error.cause, "unsolicited_output: {}")
        })
      )
    )
  )

  live("a banner in one write with the first reply: the cause describes the banner (by shape), not the reply", () =>
    provided(
      withExtension(fixtureConfig("ext-banner.py"), (ext) =>
        Effect.gen(function* () {
          const error = expectFailure((yield* timedSend(ext, toolCall("c1"))).result)
          assert.strictEqual(error._tag, "UnsolicitedOutput")
          const status = yield* awaitDeath(ext)
          // "guard v1 ready": not JSON, 14 bytes. Never `{}`, the reply that followed it.
          assert.deepStrictEqual(status.state, {
            _tag: "dead",
            cause: { _tag: "unsolicited_output", detail: "(invalid JSON, 14 bytes)" }
          })
        })
      )
    )
  )

  live("blank lines: a trailing print() after each reply and up to 1000 in a row are ignored", () =>
    provided(
      withExtension(fixtureConfig("ext-blank-lines.py", { env: { BLANKS: "1000" } }), (ext) =>
        Effect.gen(function* () {
          for (const id of ["c1", "c2", "c3", "c4", "c5"]) {
            assert.strictEqual((yield* timedSend(ext, toolCall(id))).result._tag, "Success")
          }
          assert.deepStrictEqual((yield* ext.status).state, { _tag: "live" })
        })
      )
    )
  )

  live("blank lines without end: unsolicited output past 1000 in a row, and the extension is stopped", () =>
    provided(
      withExtension(fixtureConfig("ext-blank-lines.py", { env: { BLANKS: "forever" } }), (ext) =>
        Effect.gen(function* () {
          // The first reply may share a read with the first blank lines: then that request fails too.
          yield* timedSend(ext, toolCall("c1"))
          const status = yield* awaitDeath(ext)
          assert.deepStrictEqual(status.state, {
            _tag: "dead",
            cause: { _tag: "unsolicited_output", detail: "more than 1000 blank lines in a row" }
          })
        })
      )
    )
  )

  live("ignores SIGTERM and stdin's end: SIGKILL after the grace at close", () =>
    provided(
      Effect.gen(function* () {
        const closed = yield* withExtension(fixtureConfig("ext-ignore-term.py"), (ext) =>
          Effect.gen(function* () {
            assert.strictEqual((yield* timedSend(ext, toolCall("c1"))).result._tag, "Success")
          })
        )
        // stdin closed → grace → SIGTERM (ignored) → grace → SIGKILL.
        assert.isAtLeast(closed.closeMillis, 2 * GRACE - 20)
        assert.isBelow(closed.closeMillis, within(2 * GRACE))
      })
    )
  )

  live("a grandchild that keeps the pipes open: the exit is seen anyway, and the grandchild is killed", () =>
    provided(
      Effect.gen(function* () {
        const closed = yield* withExtension(fixtureConfig("ext-grandchild.sh"), (ext) =>
          Effect.gen(function* () {
            const first = yield* timedSend(ext, toolCall("c1"))
            if (first.result._tag === "Failure") return assert.fail(first.result.failure.message)
            const grandchild = Number(first.result.success.reply.reason)
            assert.isTrue(isLive(grandchild))
            // The leader has exited while its child holds stdout open: reported as an exit, not a timeout.
            const second = yield* timedSend(ext, toolCall("c2"))
            const error = expectFailure(second.result)
            assert.include(["ExtensionExited", "ExtensionDead"], error._tag)
            const status = yield* awaitDeath(ext)
            assert.deepStrictEqual(status.state, { _tag: "dead", cause: { _tag: "exited", code: 0, signal: null } })
            return grandchild
          })
        )
        assert.isFalse(isLive(closed.result), `grandchild ${closed.result} outlived the scope`)
      })
    )
  )
})

describe("process extension faults, through this process's memory (alone)", () => {
  live(
    "a 32 MiB line: ReplyTooLong, with host memory bounded",
    () =>
      provided(
        withExtension(fixtureConfig("ext-long-line.mjs"), (ext) =>
          Effect.gen(function* () {
            const before = process.memoryUsage()
            let peak = before.rss
            const sampler = setInterval(() => {
              peak = Math.max(peak, process.memoryUsage().rss)
            }, 2)
            const { result } = yield* timedSend(ext, toolCall("c1"))
            clearInterval(sampler)
            peak = Math.max(peak, process.memoryUsage().rss)
            const error = expectFailure(result)
            assert.deepStrictEqual(error._tag === "ReplyTooLong" && error.max_line_bytes, 16 * 1024 * 1024)
            // The decoder gives up at 16 MiB without reading the rest: nowhere near a copy of 32 MiB, let alone
            // several (a string of it alone would be 64 MiB).
            const grewMiB = (peak - before.rss) / (1024 * 1024)
            assert.isBelow(grewMiB, 48, `rss grew by ${grewMiB.toFixed(1)} MiB`)
            const status = yield* ext.status
            assert.strictEqual(status.state._tag === "dead" && status.state.cause._tag, "reply_too_long")
          })
        )
      ),
    30_000
  )

  live(
    "100 MiB on stderr while answering: the reply arrives, the kept tail is at most 64 KiB",
    () =>
      provided(
        withExtension(fixtureConfig("ext-stderr-flood.py"), (ext) =>
          Effect.gen(function* () {
            const { result } = yield* timedSend(ext, toolCall("c1"))
            assert.strictEqual(result._tag, "Success")
            // The reply can overtake the end of the flood on the other pipe; the tail catches up.
            const status = yield* ext.status.pipe(
              Effect.repeat({ until: (s) => s.stderr_tail.endsWith("flood done\n") }),
              Effect.timeout(within(2500))
            )
            assert.isAtMost(Buffer.byteLength(status.stderr_tail), 64 * 1024)
            assert.isAbove(Buffer.byteLength(status.stderr_tail), 60 * 1024)
            assert.deepStrictEqual(status.state, { _tag: "live" })
          })
        )
      ),
    40_000
  )
})
