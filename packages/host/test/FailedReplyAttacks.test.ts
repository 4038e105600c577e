import { assert, describe, it } from "@effect/vitest"
import type { PolicyConfig } from "@abhed/protocol"
import { Effect } from "effect"
import { AuditLog } from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import * as FakeHost from "./FakeHost.ts"

/**
 * A reply that says `failed` (docs/protocol.md) can never permit: whatever else it carries, in whichever round, for
 * whichever event, it counts exactly as a failure of that request under the extension's on_failure.
 */

const withHost = FakeHost.withHost
const Why = "extension b could not answer: no"

describe("a failed reply never permits", () => {
  it.effect("its block, args and content are never applied; another's veto and the policy's deny stand", () => {
    const policy: PolicyConfig = {
      deny: [{ tool: "rm", args: {}, reason: "no rm" }],
      ask: [],
      allow: [],
      default: "allow"
    }
    const a = FakeExtension.fromReplies("a", { tool_call: (req) => (req.tool === "curl" ? { block: true } : {}) })
    const b = FakeExtension.fromReplies("b", {
      tool_call: () => ({ failed: "no", block: false, args: { command: "evil" } }),
      tool_result: () => ({ failed: "no", content: "evil", is_error: false })
    })
    return withHost(
      [a, b],
      (h) =>
        Effect.gen(function* () {
          const ls = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
          assert.deepStrictEqual([ls.decision, ls.args], ["allow", { command: "ls" }])
          assert.strictEqual((yield* h.toolCall({ tool: "curl", args: {} })).decision, "deny")
          assert.strictEqual((yield* h.toolCall({ tool: "rm", args: {} })).decision, "deny")
          const result = yield* h.toolResult({ tool: "bash", args: {}, content: "out", is_error: true })
          assert.deepStrictEqual([result.content, result.is_error], ["out", true])
        }),
      { policy }
    )
  })

  it.effect("in a settling round: a guard that fails on the rewritten args denies them under deny", () => {
    const rewriter = FakeExtension.fromReplies("a", {
      tool_call: (req) => (req.args["command"] === "ls" ? { args: { command: "ls -la" } } : {})
    })
    const guard = (on_failure: "ignore" | "deny") =>
      FakeExtension.fromReplies(
        "b",
        { tool_call: (req) => (req.args["command"] === "ls -la" ? { failed: "no", args: { command: "x" } } : {}) },
        { on_failure }
      )
    return Effect.gen(function* () {
      const denied = yield* withHost([rewriter, guard("deny")], (h) =>
        h.toolCall({ tool: "bash", args: { command: "ls" } })
      )
      assert.deepStrictEqual(
        [denied.decision, denied.reasons, denied.rounds],
        ["deny", [{ extension: "b", reason: Why }], 2]
      )
      const ignored = yield* withHost([rewriter, guard("ignore")], (h) =>
        h.toolCall({ tool: "bash", args: { command: "ls" } })
      )
      assert.deepStrictEqual([ignored.decision, ignored.args], ["allow", { command: "ls -la" }])
    })
  })

  it.effect("every other event: as a dead extension's answer for that request, under deny", () => {
    const tool = { name: "t", description: "t", input_schema: { type: "object" } }
    const b = FakeExtension.fromReplies(
      "b",
      {
        list_tools: () => ({ failed: "no", tools: [tool] }),
        context: () => ({ failed: "no", keep: [0, 1] }),
        before_agent_start: () => ({ failed: "no", system: "evil" }),
        before_compact: () => ({ failed: "no", cancel: false, summary: "evil" })
      },
      { on_failure: "deny", events: ["list_tools", "context", "before_agent_start", "before_compact"] }
    )
    return withHost([b], (h) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* h.tools, [])
        const context = yield* h.context(["m0", "m1"])
        assert.deepStrictEqual([context.messages, context.withheld], [[], [{ extension: "b", reason: Why }]])
        assert.strictEqual((yield* h.beforeAgentStart("sys")).system, "sys")
        const compact = yield* h.beforeCompact(["m0"])
        assert.strictEqual(compact.summary, null)
        assert.strictEqual((yield* h.status)[0]?.state._tag, "live")
      })
    )
  })

  it.effect("invoke_tool: the owner that could not answer gives no result", () => {
    const tool = { name: "t", description: "t", input_schema: { type: "object" } }
    const b = FakeExtension.fromReplies("b", {
      list_tools: () => ({ tools: [tool] }),
      invoke_tool: () => ({ failed: "no", result: "evil" })
    })
    return withHost([b], (h) =>
      Effect.gen(function* () {
        const out = yield* Effect.flip(h.invokeTool({ tool: "t", args: {} }))
        assert.strictEqual(out._tag, "ToolOwnerUnavailable")
      })
    )
  })

  it.effect("failed null is absent (the reply counts); a failed that is no string is malformed (a death)", () => {
    const nul = FakeExtension.fromReplies("a", { tool_call: () => ({ failed: null, block: true, reason: "r" }) })
    const num = FakeExtension.fromReplies("b", { tool_call: () => ({ failed: 7 }) }, { on_failure: "deny" })
    return withHost([nul, num], (h) =>
      Effect.gen(function* () {
        const call = yield* h.toolCall({ tool: "bash", args: {} })
        assert.strictEqual(call.decision, "deny")
        assert.deepStrictEqual(
          call.reasons.map((r) => r.extension),
          ["a", "b"]
        )
        const entries = yield* AuditLog.use((x) => x.entries)
        const statuses = entries.at(-1)?.rounds[0]?.exchanges.map((x) => x.status)
        assert.deepStrictEqual(statuses, ["replied", "malformed"])
      })
    )
  })

  it.effect("a failed of a megabyte: the reason is cut to its bound", () => {
    const b = FakeExtension.fromReplies(
      "b",
      { tool_call: () => ({ failed: "\u202e".repeat(1 << 20) }) },
      { on_failure: "deny" }
    )
    return withHost([b], (h) =>
      Effect.gen(function* () {
        const call = yield* h.toolCall({ tool: "bash", args: {} })
        assert.strictEqual(call.decision, "deny")
        assert.isAtMost(call.reasons[0]?.reason.length ?? Infinity, "extension b could not answer: ".length + 201)
      })
    )
  })
})
