import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, References, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import {
  encode,
  expectFailure,
  fixtureConfig,
  Patient,
  timedSend,
  toolCall,
  withExtension,
  within
} from "../support/extension-helpers.ts"

/** A well-behaved extension, for real: ordering, timeouts, lifecycle, cwd/env, stderr logging. */

const provided = <A, E>(effect: Effect.Effect<A, E, NodeServices.NodeServices>) =>
  Effect.asVoid(Effect.provide(effect, NodeServices.layer))

const tempDir = () => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-ext-"))
const Logged = Schema.Struct({
  event: Schema.String,
  session_id: Schema.String,
  call_id: Schema.optional(Schema.String)
})
/** The requests the fixture logged, one JSON line each. */
const readRequests = (file: string) =>
  (NodeFs.existsSync(file)
    ? NodeFs.readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "")
    : []
  ).map((line) => Schema.decodeUnknownSync(Logged)(JSON.parse(line)))

describe("process extension", () => {
  it.live("answers many concurrent requests one at a time, in order, each reply matched to its request", () => {
    const log = NodePath.join(tempDir(), "read.log")
    return provided(
      Effect.gen(function* () {
        const ids = Array.from({ length: 60 }, (_, i) => `c${i}`)
        const closed = yield* withExtension(fixtureConfig("ext-echo.mjs", { env: { ABHED_FIXTURE_LOG: log } }), (ext) =>
          Effect.gen(function* () {
            const replies = yield* Effect.forEach(ids, (id) => ext.send(toolCall(id)), { concurrency: "unbounded" })
            assert.deepStrictEqual(
              replies.map((r) => r.reply.reason),
              ids
            )
            const status = yield* ext.status
            assert.strictEqual(status.served, ids.length)
            assert.deepStrictEqual(status.state, { _tag: "live" })
            assert.isNumber(status.pid)
          })
        )
        const read = readRequests(log)
        // FIFO: written in the order `send` was called; then session_end on release.
        assert.deepStrictEqual(
          read.map((r) => r.call_id ?? r.event),
          [...ids, "session_end"]
        )
        assert.deepStrictEqual(read.at(-1), { event: "session_end", session_id: "s-test" })
        assert.strictEqual(closed.status.served, ids.length)
      })
    )
  })

  it.live("session_end is not sent to an extension that did not subscribe to it", () => {
    const log = NodePath.join(tempDir(), "read.log")
    return provided(
      Effect.gen(function* () {
        yield* withExtension(
          fixtureConfig("ext-echo.mjs", { events: ["tool_call"], env: { ABHED_FIXTURE_LOG: log } }),
          (ext) => ext.send(toolCall("c1"))
        )
        assert.deepStrictEqual(
          readRequests(log).map((r) => r.event),
          ["tool_call"]
        )
      })
    )
  })

  it.live("startup_timeout_ms covers the first exchange only", () => {
    // Every reply comes DELAY after its request, far beyond timeout_ms (a late timer cannot let it through) and
    // far within the patient startup timeout (a slow interpreter start cannot make the first one time out).
    const delay = 1500
    const timeout = 300
    return provided(
      withExtension(fixtureConfig("ext-slow.py", { env: { DELAY_MS: String(delay) }, timeout_ms: timeout }), (ext) =>
        Effect.gen(function* () {
          const first = yield* timedSend(ext, toolCall("c1"))
          assert.strictEqual(first.result._tag, "Success")
          assert.isAtLeast(first.millis, delay - 10) // longer than timeout_ms, and still a success
          const second = yield* timedSend(ext, toolCall("c2"))
          const error = expectFailure(second.result)
          assert.deepStrictEqual(error._tag === "ExtensionTimeout" && error.timeout_ms, timeout)
          assert.isAtLeast(second.millis, timeout - 10)
        })
      )
    )
  })

  it.live("cwd resolves against baseDir (default: baseDir itself); env adds to the host's", () => {
    const base = tempDir()
    NodeFs.mkdirSync(NodePath.join(base, "work"))
    const request = encode<"before_agent_start">({
      event: "before_agent_start",
      session_id: "s-test",
      id: "r-1",
      system: ""
    })
    return provided(
      Effect.gen(function* () {
        const inWork = yield* withExtension(
          fixtureConfig("ext-echo.sh", { cwd: "work", env: { ABHED_FIXTURE_VAR: "from-config" } }),
          (ext) => ext.send(request),
          { baseDir: base }
        )
        assert.strictEqual(
          inWork.result.reply.system,
          `${NodeFs.realpathSync(NodePath.join(base, "work"))}|from-config`
        )
        const inBase = yield* withExtension(fixtureConfig("ext-echo.sh"), (ext) => ext.send(request), { baseDir: base })
        // No ABHED_FIXTURE_VAR in the config: the fixture sees none (the host's PATH still found bash and jq).
        assert.strictEqual(inBase.result.reply.system, `${NodeFs.realpathSync(base)}|`)
      })
    )
  })

  it.live("stderr lines go to the logger at debug level, tagged with the extension's name", () => {
    const logged: Array<{ level: string; message: string; extension: unknown }> = []
    const capture = Logger.make((options) => {
      const annotations = options.fiber.getRef(References.CurrentLogAnnotations)
      logged.push({
        level: options.logLevel,
        message: Array.isArray(options.message) ? options.message.join(" ") : String(options.message),
        extension: annotations["extension"]
      })
    })
    return provided(
      withExtension(fixtureConfig("ext-echo.sh"), (ext) =>
        Effect.gen(function* () {
          yield* ext.send(toolCall("c1"))
          // stderr is another pipe: wait (bounded) for its line to be read.
          yield* Effect.sync(() => logged.some((l) => l.message === "ext-echo: started")).pipe(
            Effect.repeat({ until: (seen) => seen }),
            Effect.timeout(within(1000))
          )
          const line = logged.find((l) => l.message === "ext-echo: started")
          assert.deepStrictEqual(line, { level: "Debug", message: "ext-echo: started", extension: "ext-echo" })
          assert.include((yield* ext.status).stderr_tail, "ext-echo: started\n")
        })
      ).pipe(Effect.provide(Logger.layer([capture])), Effect.provideService(References.MinimumLogLevel, "Debug"))
    )
  })

  it.live("a clean close: stdin closes, the extension exits by itself, no signal needed", () =>
    provided(
      Effect.gen(function* () {
        const grace = Patient.timeout_ms
        const closed = yield* withExtension(fixtureConfig("ext-echo.mjs", { grace_ms: grace }), (ext) =>
          ext.send(toolCall("c1"))
        )
        // Had it needed SIGTERM, close would have waited out the whole grace first.
        assert.isBelow(closed.closeMillis, Math.min(within(250), grace / 2))
      })
    )
  )
})
