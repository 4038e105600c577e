import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { AuditLog, type AuditRecord } from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import * as FakeHost from "./FakeHost.ts"

/**
 * The record's `input`: what came in to a tool_result or a context, when the extensions changed it (the outcome
 * holds what came out). A replay sends it again, so it must be exact; absent, the outcome is the input.
 */

const lastRecord = (event: string) =>
  Effect.gen(function* () {
    const all = yield* (yield* AuditLog).entries
    return all.filter((r) => r.event === event).at(-1) satisfies AuditRecord | undefined
  })

const result = (fakes: ReadonlyArray<FakeHost.Fake>, content: string, is_error = false) =>
  FakeHost.withHost(fakes, (h) =>
    Effect.gen(function* () {
      const outcome = yield* h.toolResult({ tool: "read", args: { path: "a" }, content, is_error, call_id: "c-1" })
      return { outcome, record: yield* lastRecord("tool_result") }
    })
  )

const context = (fakes: ReadonlyArray<FakeHost.Fake>, messages: ReadonlyArray<unknown>) =>
  FakeHost.withHost(fakes, (h) =>
    Effect.gen(function* () {
      const outcome = yield* h.context(messages)
      return { outcome, record: yield* lastRecord("context") }
    })
  )

const redactor = FakeExtension.fromReplies("redactor", {
  tool_result: (req) => ({ content: req.content.replaceAll("KEY=abc", "KEY=[redacted]") })
})
const flagger = FakeExtension.fromReplies("flagger", { tool_result: () => ({ is_error: true }) })
const dead = FakeExtension.make("dead", () => Effect.fail(FakeExtension.FakeExit.code(1)), { on_failure: "deny" })
const silent = FakeExtension.fromReplies("silent", {})

describe("the audit record's input", () => {
  it.effect("a tool_result nobody changed has none: its outcome is what came in", () =>
    Effect.gen(function* () {
      const { record } = yield* result([redactor, silent], "nothing to hide")
      assert.deepStrictEqual(record?.outcome, { content: "nothing to hide", is_error: false, rounds: 1 })
      assert.isFalse(record !== undefined && "input" in record)
    })
  )

  it.effect("a rewritten tool_result keeps the content the agent passed", () =>
    Effect.gen(function* () {
      const { outcome, record } = yield* result([redactor], "KEY=abc")
      assert.strictEqual(outcome.content, "KEY=[redacted]")
      assert.deepStrictEqual(record?.input, { content: "KEY=abc", is_error: false })
    })
  )

  it.effect("is_error raised by an extension: the input keeps the agent's own is_error", () =>
    Effect.gen(function* () {
      const { outcome, record } = yield* result([flagger], "ok")
      assert.isTrue(outcome.is_error)
      assert.deepStrictEqual(record?.input, { content: "ok", is_error: false })
    })
  )

  it.effect("an extension that acted without changing the outcome: the input is recorded all the same", () =>
    Effect.gen(function* () {
      // The agent's own is_error was true: raising it changes nothing, and is still an act.
      const raised = yield* result([flagger], "failed", true)
      assert.deepStrictEqual(raised.record?.outcome, { content: "failed", is_error: true, rounds: 1 })
      assert.deepStrictEqual(raised.record?.input, { content: "failed", is_error: true })
      const everything = FakeExtension.fromReplies("filter", { context: () => ({ keep: [0, 1] }) })
      const kept = yield* context([everything], ["m0", "m1"])
      assert.deepStrictEqual(kept.outcome.messages, ["m0", "m1"])
      assert.deepStrictEqual(kept.record?.input, { messages: ["m0", "m1"] })
    })
  )

  it.effect("a withheld tool_result keeps the content the agent passed", () =>
    Effect.gen(function* () {
      const { outcome, record } = yield* result([dead], "the tool's output", true)
      assert.match(outcome.content, /^\[withheld: /)
      assert.deepStrictEqual(record?.input, { content: "the tool's output", is_error: true })
    })
  )

  it.effect("a context no filter touched has none; a keep or a withheld context keeps the messages sent", () =>
    Effect.gen(function* () {
      const all = yield* context([silent], ["m0", "m1"])
      assert.deepStrictEqual(all.record?.outcome, { keep: [0, 1], messages: ["m0", "m1"], withheld: [] })
      assert.isFalse(all.record !== undefined && "input" in all.record)

      const filter = FakeExtension.fromReplies("filter", { context: () => ({ keep: [1] }) })
      const kept = yield* context([filter], ["m0", "m1"])
      assert.deepStrictEqual(kept.outcome.messages, ["m1"])
      assert.deepStrictEqual(kept.record?.input, { messages: ["m0", "m1"] })

      const withheld = yield* context([dead], ["m0"])
      assert.isAbove(withheld.outcome.withheld.length, 0)
      assert.deepStrictEqual(withheld.record?.input, { messages: ["m0"] })
    })
  )

  it.effect("input the host could not send is not recorded at all", () =>
    Effect.gen(function* () {
      const { record } = yield* context([silent], [{ n: 1n }])
      assert.isAbove(record?.notes.filter((n) => n.startsWith("not sent to any extension")).length ?? 0, 0)
      assert.isFalse(record !== undefined && "input" in record)
    })
  )
})
