import { ExtensionHost } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import type { OutputLine } from "../../src/Output.ts"
import { type LineResult, runSession } from "../../src/run/Session.ts"

/**
 * Issue 24.5: a run is one session. A recording holding several sessions was decided as one, every line under the
 * first request's session_id: a line that names another session is now an error line, never decided.
 */

const host = ExtensionHost.layerMock({
  tools: Effect.succeed([]),
  toolCall: (call) => Effect.succeed({ decision: "allow", reasons: [], args: call.args, rounds: 1 })
})

const collect = (lines: ReadonlyArray<string>, sessionId?: string) =>
  Effect.gen(function* () {
    const results: Array<LineResult> = []
    const sessions: Array<string> = []
    yield* runSession({
      lines: Stream.fromIterable(lines),
      host: (id) => {
        sessions.push(id)
        return host
      },
      defaultSessionId: "default",
      sessionId,
      onLine: (r) => Effect.sync(() => void results.push(r))
    })
    return { outputs: results.map((r) => r.output), sessions }
  })

const call = (session?: string) =>
  JSON.stringify({
    event: "tool_call",
    ...(session === undefined ? {} : { session_id: session }),
    tool: "read",
    args: {}
  })
const allowed: OutputLine = { event: "tool_call", decision: "allow", reasons: [], args: {}, rounds: 1 }

describe("runSession: one session per run", () => {
  it.effect("a line of another session is an error line naming both sessions; the run goes on", () =>
    Effect.gen(function* () {
      const { outputs, sessions } = yield* collect([call("a"), call("b"), call(), call("a")])
      assert.deepStrictEqual(sessions, ["a"])
      assert.deepStrictEqual(outputs, [
        allowed,
        {
          error:
            'session_id "b" is not this run\'s session "a" (line 1): a run decides one session; split the input ' +
            "by session_id, or give --session-id to decide every line in one session",
          line: 2
        },
        allowed,
        allowed
      ])
    })
  )

  it.effect("the session of a run without ids is the default one: a line naming another is an error", () =>
    Effect.gen(function* () {
      const { outputs } = yield* collect([call(), call("x")])
      assert.deepStrictEqual(outputs[1], {
        error:
          'session_id "x" is not this run\'s session "default" (line 1): a run decides one session; split the ' +
          "input by session_id, or give --session-id to decide every line in one session",
        line: 2
      })
    })
  )

  it.effect("--session-id puts every line in its session, whatever the line says", () =>
    Effect.gen(function* () {
      const { outputs, sessions } = yield* collect([call("a"), call("b")], "forced")
      assert.deepStrictEqual(sessions, ["forced"])
      assert.deepStrictEqual(outputs, [allowed, allowed])
    })
  )
})
