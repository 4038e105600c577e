import { ExtensionHost, UnknownTool } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Fiber, Queue, Stream } from "effect"
import { type LineResult, runSession } from "../../src/run/Session.ts"

const mockHost = ExtensionHost.layerMock({
  tools: Effect.succeed([]),
  toolCall: (call) => Effect.succeed({ decision: "allow", reasons: [], args: call.args, rounds: 1 }),
  invokeTool: (call) => new UnknownTool({ tool: call.tool }),
  beforeAgentStart: (system) => Effect.succeed({ system: `${system}!` })
})

const collect = (lines: ReadonlyArray<string>, sessionId?: string) =>
  Effect.gen(function* () {
    const results: Array<LineResult> = []
    const sessions: Array<string> = []
    yield* runSession({
      lines: Stream.fromIterable(lines),
      host: (id) => {
        sessions.push(id)
        return mockHost
      },
      defaultSessionId: "default",
      sessionId,
      onLine: (r) => Effect.sync(() => void results.push(r))
    })
    return { results, sessions }
  })

describe("runSession", () => {
  it.effect("one output per non-blank line, numbered as in the file; bad lines do not stop the run", () =>
    Effect.gen(function* () {
      const { results } = yield* collect([
        `{"event":"tool_call","tool":"read","args":{"path":"a"}}`,
        "",
        "not json",
        `{"event":"tool_calls"}`,
        `{"event":"tool_call","tool":"read","args":[]}`,
        `{"event":"before_agent_start","system":"hi"}`,
        `{"event":"session_end"}`
      ])
      assert.deepStrictEqual(
        results.map((r) => r.line),
        [1, 3, 4, 5, 6, 7]
      )
      assert.deepStrictEqual(results[0]?.output, {
        event: "tool_call",
        decision: "allow",
        reasons: [],
        args: { path: "a" },
        rounds: 1
      })
      for (const i of [1, 2, 3]) {
        const out = results[i]?.output
        assert.isTrue(out !== undefined && "error" in out && out.line === results[i]?.line)
      }
      assert.deepStrictEqual(results[4]?.output, { event: "before_agent_start", system: "hi!" })
      assert.deepStrictEqual(results[5]?.output, { event: "session_end" })
    })
  )

  it.effect("an invoke_tool the host cannot route is an error line", () =>
    Effect.gen(function* () {
      const { results } = yield* collect([`{"event":"invoke_tool","tool":"nope","args":{}}`])
      assert.deepStrictEqual(results[0]?.output, { error: `no extension provides the tool "nope"`, line: 1 })
    })
  )

  it.effect("a tool_call that got an internal error is no allow: an invoke_tool for it is refused, not run", () =>
    Effect.gen(function* () {
      const invoked: Array<unknown> = []
      const broken = ExtensionHost.layerMock({
        tools: Effect.succeed([]),
        toolCall: (call) =>
          call.args["boom"] === true
            ? Effect.die(new Error("boom"))
            : Effect.succeed({ decision: "allow", reasons: [], args: call.args, rounds: 1 }),
        invokeTool: (call) =>
          Effect.sync(() => {
            if (call.refused === undefined) invoked.push(call.args)
            return { result: "ran", is_error: false }
          })
      })
      const results: Array<LineResult> = []
      yield* runSession({
        lines: Stream.fromIterable([
          `{"event":"tool_call","tool":"wipe","args":{"boom":true}}`,
          `{"event":"invoke_tool","tool":"wipe","args":{"boom":true}}`,
          `{"event":"invoke_tool","tool":"wipe","call_id":"c-1","args":{"boom":true}}`
        ]),
        host: () => broken,
        defaultSessionId: "default",
        onLine: (r) => Effect.sync(() => void results.push(r))
      })
      assert.deepStrictEqual(results[0]?.output, { error: "internal error: boom", line: 1 })
      assert.deepStrictEqual(results[1]?.output, {
        error: 'invoke_tool: the tool_call "c-1" (line 1) was never decided (an internal error): it never runs',
        line: 2
      })
      assert.isTrue(results[2] !== undefined && "error" in results[2].output)
      assert.deepStrictEqual(invoked, [])
    })
  )

  it.effect("the host starts once, at the first valid request, with its session_id", () =>
    Effect.gen(function* () {
      const a = yield* collect([
        "bad",
        `{"event":"session_start","session_id":"s-9"}`,
        `{"event":"session_end","session_id":"s-10"}`
      ])
      assert.deepStrictEqual(a.sessions, ["s-9"])
      const b = yield* collect([`{"event":"session_start"}`])
      assert.deepStrictEqual(b.sessions, ["default"])
      const c = yield* collect([`{"event":"session_start","session_id":"s-9"}`], "forced")
      assert.deepStrictEqual(c.sessions, ["forced"])
      const d = yield* collect(["bad", ""])
      assert.deepStrictEqual(d.sessions, [])
    })
  )

  it.effect("streams: a line is decided and handed on before the next line is available", () =>
    Effect.gen(function* () {
      const input = yield* Queue.unbounded<string, Cause.Done>()
      const first = yield* Deferred.make<LineResult>()
      const seen: Array<number> = []
      const fiber = yield* runSession({
        lines: Stream.fromQueue(input),
        host: () => mockHost,
        defaultSessionId: "s",
        onLine: (r) =>
          Effect.andThen(
            Effect.sync(() => void seen.push(r.line)),
            Deferred.succeed(first, r)
          )
      }).pipe(Effect.forkChild)
      yield* Queue.offer(input, `{"event":"session_start"}`)
      // If output waited for the end of input, this would never complete (the queue is still open).
      const r = yield* Deferred.await(first)
      assert.strictEqual(r.line, 1)
      yield* Queue.offer(input, `{"event":"session_end"}`)
      yield* Queue.end(input)
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(seen, [1, 2])
    })
  )

  it.effect(
    "a tool_result without args gets those its call ran with (an extension's rewrite); with no such call, an error line",
    () =>
      Effect.gen(function* () {
        const seen: Array<unknown> = []
        const rewriting = ExtensionHost.layerMock({
          tools: Effect.succeed([]),
          toolCall: (call) =>
            Effect.succeed({ decision: "allow", reasons: [], args: { ...call.args, sandboxed: true }, rounds: 2 }),
          toolResult: (result) =>
            Effect.sync(() => {
              seen.push({ call_id: result.call_id, args: result.args })
              return { content: result.content, is_error: result.is_error, rounds: 1 }
            })
        })
        const results: Array<LineResult> = []
        yield* runSession({
          lines: Stream.fromIterable([
            `{"event":"tool_call","tool":"bash","args":{"command":"ls"}}`,
            `{"event":"tool_call","tool":"bash","call_id":"x","args":{"command":"pwd"}}`,
            `{"event":"tool_result","tool":"bash","call_id":"c-1","content":"a","is_error":false}`,
            `{"event":"tool_result","tool":"bash","content":"b","is_error":false}`,
            `{"event":"tool_result","tool":"bash","content":"c","is_error":false}`,
            `{"event":"tool_result","tool":"read","call_id":"nope","content":"d","is_error":false}`,
            `{"event":"tool_result","tool":"bash","args":{"given":true},"content":"e","is_error":false}`
          ]),
          host: () => rewriting,
          defaultSessionId: "default",
          onLine: (r) => Effect.sync(() => void results.push(r))
        })
        assert.deepStrictEqual(seen, [
          { call_id: "c-1", args: { command: "ls", sandboxed: true } },
          { call_id: "x", args: { command: "pwd", sandboxed: true } },
          { call_id: "c-2", args: { given: true } }
        ])
        assert.deepStrictEqual(
          results.map((r) => r.output).filter((o) => "error" in o),
          [
            {
              error:
                'tool_result: "args" is missing, and no earlier tool_call of "bash" awaits its result to take them from: give "args", or the call\'s "call_id"',
              line: 5
            },
            {
              error:
                'tool_result: "args" is missing, and no earlier tool_call with call_id "nope" awaits its result to take them from: give "args", or the call\'s "call_id"',
              line: 6
            }
          ]
        )
      })
  )
})
