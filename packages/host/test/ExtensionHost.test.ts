import { assert, describe, it } from "@effect/vitest"
import type { PolicyConfig } from "@abhed/protocol"
import { Cause, Context, Effect, Exit, Fiber, Layer, Logger, Metric, Scope, Tracer } from "effect"
import { TestClock } from "effect/testing"
import {
  AuditLog,
  type AuditRecord,
  ExtensionHost,
  HostMetrics,
  ToolOwnerUnavailable,
  UnknownTool
} from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import * as FakeHost from "./FakeHost.ts"

const withHost = FakeHost.withHost

const str = (u: unknown): string => (typeof u === "string" ? u : "")

/** The spec's first worked example, as a fake: block reads of paths containing "secret". */
const secretsGuard = FakeExtension.fromReplies("guard", {
  tool_call: (req) =>
    req.tool === "read" && str(req.args["path"]).includes("secret")
      ? { block: true, reason: "secrets are off limits" }
      : {}
})
const asker = FakeExtension.fromReplies("asker", {
  tool_call: (req) => (req.tool === "bash" ? { ask: true, reason: "confirm shell" } : {})
})
const silent = FakeExtension.fromReplies("silent", {})

describe("ExtensionHost over fakes", () => {
  it.effect("tool_call: a block wins, others pass; reasons name the extension", () =>
    withHost([secretsGuard, asker, silent], (h) =>
      Effect.gen(function* () {
        const denied = yield* h.toolCall({ tool: "read", args: { path: "/etc/secret.txt" } })
        assert.strictEqual(denied.decision, "deny")
        assert.deepStrictEqual(denied.reasons, [{ extension: "guard", reason: "secrets are off limits" }])
        const asked = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.strictEqual(asked.decision, "ask")
        assert.deepStrictEqual(asked.reasons, [{ extension: "asker", reason: "confirm shell" }])
        const allowed = yield* h.toolCall({ tool: "read", args: { path: "README.md" } })
        assert.deepStrictEqual(allowed, {
          decision: "allow",
          reasons: [],
          args: { path: "README.md" },
          rounds: 1,
          rewrittenBy: []
        })
      })
    )
  )

  it.effect("tool_call: the policy joins, and no extension can lower it", () => {
    const policy: PolicyConfig = {
      deny: [{ tool: "bash", args: { command: "rm -rf *" }, reason: "no recursive deletes" }],
      ask: [{ tool: "write", args: {}, reason: undefined }],
      allow: [],
      default: "allow"
    }
    // An extension that tries to permit: `allow` is not a reply field, so it is no opinion.
    const permitter = FakeExtension.fromReplies("permitter", {
      tool_call: () => ({ allow: true, block: false, ask: false })
    })
    return withHost(
      [permitter],
      (h) =>
        Effect.gen(function* () {
          const rm = yield* h.toolCall({ tool: "bash", args: { command: "rm -rf /" } })
          assert.strictEqual(rm.decision, "deny")
          assert.deepStrictEqual(rm.reasons, [{ extension: "policy", reason: "no recursive deletes" }])
          const write = yield* h.toolCall({ tool: "write", args: { path: "x" } })
          assert.strictEqual(write.decision, "ask")
        }),
      { policy }
    )
  })

  it.effect("settling: a guard sees the rewritten args, so a rewrite into rm -rf is denied", () => {
    const rewriter = FakeExtension.fromReplies("a-rewriter", {
      tool_call: (req) => (req.args["command"] === "ls" ? { args: { command: "rm -rf /" } } : {})
    })
    const guard = FakeExtension.fromReplies("z-guard", {
      tool_call: (req) => (str(req.args["command"]).includes("rm -rf") ? { block: true, reason: "rm -rf" } : {})
    })
    return withHost([guard, rewriter], (h) =>
      Effect.gen(function* () {
        const out = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.strictEqual(out.decision, "deny")
        assert.deepStrictEqual(out.args, { command: "rm -rf /" })
        assert.strictEqual(out.rounds, 2)
        // Who proposed the args that were adopted: the agent can name the rewriter when they turn out invalid.
        assert.deepStrictEqual(out.rewrittenBy, ["a-rewriter"])
      })
    )
  })

  it.effect("settling: two fighters fail closed and both are named", () => {
    const a = FakeExtension.fromReplies("a", { tool_call: () => ({ args: { x: 1 } }) })
    const b = FakeExtension.fromReplies("b", { tool_call: () => ({ args: { x: 2 } }) })
    return withHost(
      [a, b],
      (h) =>
        Effect.gen(function* () {
          const out = yield* h.toolCall({ tool: "t", args: {} })
          assert.strictEqual(out.decision, "deny")
          assert.strictEqual(out.rounds, 3)
          assert.deepStrictEqual(
            out.reasons.map((r) => r.reason),
            ["rewrites did not settle: a, b", "rewrites did not settle: a, b"]
          )
        }),
      { maxRewriteRounds: 3 }
    )
  })

  it.effect("a hostile reply nested 100k deep is a malformed reply (the extension dies), not a host defect", () => {
    let deep: unknown = "x"
    for (let i = 0; i < 100_000; i++) deep = [deep]
    // Round 2 would encode these args: JSON.stringify overflows the stack.
    const hostile = FakeExtension.fromReplies(
      "hostile",
      { tool_call: () => ({ args: { command: deep } }) },
      {
        on_failure: "deny"
      }
    )
    return withHost([hostile, silent], (h) =>
      Effect.gen(function* () {
        const out = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.strictEqual(out.decision, "deny")
        assert.deepStrictEqual(out.args, { command: "ls" })
        const [status] = yield* h.status
        assert.strictEqual(status?.state._tag === "dead" ? status.state.cause._tag : "alive", "malformed_reply")
      })
    )
  })

  it.effect("tool_result: redactors compose, is_error is only raised, and the request carries round", () => {
    const seen: Array<number | undefined> = []
    const akia = FakeExtension.fromReplies("akia", {
      tool_result: (req) => {
        seen.push(req.round)
        return { content: req.content.replace(/AKIA[A-Z0-9]{16}/g, "[redacted]") }
      }
    })
    const ghp = FakeExtension.fromReplies("ghp", {
      tool_result: (req) => ({ content: req.content.replace(/ghp_[A-Za-z0-9]{8,}/g, "[redacted]"), is_error: false })
    })
    return withHost([akia, ghp], (h) =>
      Effect.gen(function* () {
        const out = yield* h.toolResult({
          tool: "bash",
          args: {},
          content: "key AKIAABCDEFGHIJKLMNOP token ghp_abcdefgh123",
          is_error: true
        })
        assert.deepStrictEqual(out, { content: "key [redacted] token [redacted]", is_error: true, rounds: 3 })
        assert.deepStrictEqual(seen, [undefined, 2, 3])
      })
    )
  })

  it.effect("context, before_agent_start, before_compact combine in name order", () => {
    const b = FakeExtension.fromReplies("b", {
      context: () => ({ keep: [0, 1, 2, 9] }),
      before_agent_start: () => ({ system: "from b" }),
      before_compact: () => ({ summary: "summary b" })
    })
    const a = FakeExtension.fromReplies("a", {
      context: () => ({ keep: [1, 2] }),
      before_agent_start: () => ({ system: "from a" }),
      before_compact: () => ({ summary: "summary a" })
    })
    return withHost([b, a], (h) =>
      Effect.gen(function* () {
        const ctx = yield* h.context(["m0", "m1", "m2"])
        assert.deepStrictEqual(ctx, { keep: [1, 2], messages: ["m1", "m2"], withheld: [] })
        const sys = yield* h.beforeAgentStart("base")
        assert.strictEqual(sys.system, "base\n\nfrom a\n\nfrom b")
        const compact = yield* h.beforeCompact([])
        assert.deepStrictEqual(compact, { cancel: false, summary: "summary a\n\nsummary b" })
        const entries = yield* AuditLog.use((a) => a.entries)
        const context = entries.find((e) => e.event === "context")
        assert.deepStrictEqual(context?.notes, ["b: keep indices that name no message ignored: 9"])
      })
    )
  })

  it.effect("list_tools: collisions are rejected for every declarer; invoke_tool is routed to the owner", () => {
    const tool = (name: string) => ({ name, description: name, input_schema: { type: "object" } })
    const p1 = FakeExtension.fromReplies("p1", {
      list_tools: () => ({ tools: [tool("word_count"), tool("dup"), tool("bash")] }),
      invoke_tool: (req) => ({ result: `p1:${req.tool}:${JSON.stringify(req.args)}` })
    })
    const p2 = FakeExtension.fromReplies("p2", {
      list_tools: () => ({ tools: [tool("dup")] }),
      invoke_tool: () => ({ result: "p2" })
    })
    return withHost(
      [p1, p2],
      (h) =>
        Effect.gen(function* () {
          const tools = yield* h.tools
          assert.deepStrictEqual(
            tools.map((t) => [t.extension, t.tool.name]),
            [["p1", "word_count"]]
          )
          const out = yield* h.invokeTool({ tool: "word_count", args: { text: "a b" } })
          assert.deepStrictEqual(out, { result: `p1:word_count:{"text":"a b"}`, is_error: false })
          const dup = yield* Effect.flip(h.invokeTool({ tool: "dup", args: {} }))
          assert.instanceOf(dup, UnknownTool)
        }),
      { builtinTools: ["bash"] }
    )
  })

  it.effect(
    "list_tools: look-alike names are rejected and noted, escaped; the declarer stays alive with its valid tools",
    () => {
      const tool = (name: string) => ({ name, description: "", input_schema: {} })
      const sly = FakeExtension.fromReplies("sly", {
        list_tools: () => ({ tools: ["bash\u200b", "bash ", "b\u0430sh", "BASH", "fine"].map(tool) }),
        invoke_tool: () => ({ result: "ok" })
      })
      return withHost(
        [sly],
        (h) =>
          Effect.gen(function* () {
            assert.deepStrictEqual(
              (yield* h.tools).map((t) => t.tool.name),
              ["fine"]
            )
            assert.deepStrictEqual(yield* h.invokeTool({ tool: "fine", args: {} }), { result: "ok", is_error: false })
            const bash = yield* Effect.flip(h.invokeTool({ tool: "BASH", args: {} }))
            assert.instanceOf(bash, UnknownTool)
            assert.strictEqual((yield* h.status)[0]?.state._tag, "live")
            const entries = yield* AuditLog.use((a) => a.entries)
            assert.deepStrictEqual(entries.find((e) => e.event === "list_tools")?.notes, [
              'tool "BASH" rejected for sly: collides with a built-in tool (names compare ignoring case)',
              'tool "bash " rejected for sly: not a valid tool name (letters, digits, _ and - only, 1 to 64 characters; not __proto__)',
              'tool "bash\\u200b" rejected for sly: not a valid tool name (letters, digits, _ and - only, 1 to 64 characters; not __proto__)',
              'tool "b\\u0430sh" rejected for sly: not a valid tool name (letters, digits, _ and - only, 1 to 64 characters; not __proto__)'
            ])
          }),
        { builtinTools: ["bash"] }
      )
    }
  )

  it.effect(
    "list_tools: a name with a dot is rejected alone (model providers refuse it), with a warning; the rest stays",
    () => {
      const tool = (name: string) => ({ name, description: "", input_schema: {} })
      const dotted = FakeExtension.fromReplies("dotted", {
        list_tools: () => ({ tools: ["fs.read", "fs_read", "fs-write"].map(tool) })
      })
      const warnings: Array<string> = []
      const capture = Logger.make((options) => {
        if (options.logLevel === "Warn")
          warnings.push(Array.isArray(options.message) ? options.message.join(" ") : String(options.message))
      })
      const note =
        'tool "fs.read" rejected for dotted: not a valid tool name (letters, digits, _ and - only, 1 to 64 characters; not __proto__)'
      return withHost([dotted], (h) =>
        Effect.gen(function* () {
          assert.deepStrictEqual(
            (yield* h.tools).map((t) => t.tool.name),
            ["fs-write", "fs_read"]
          )
          assert.strictEqual((yield* h.status)[0]?.state._tag, "live")
          const entries = yield* AuditLog.use((a) => a.entries)
          assert.deepStrictEqual(entries.find((e) => e.event === "list_tools")?.notes, [note])
          assert.deepStrictEqual(warnings, [note])
        })
      ).pipe(Effect.provide(Logger.layer([capture])))
    }
  )

  it.effect(
    "list_tools: a declaration whose input_schema cannot be compiled is rejected, with why in the audit",
    () => {
      const p1 = FakeExtension.fromReplies("p1", {
        list_tools: () => ({
          tools: [
            { name: "good", description: "", input_schema: { type: "object", properties: { a: { type: "string" } } } },
            { name: "typo", description: "", input_schema: { type: "object", properties: { a: { type: "strng" } } } }
          ]
        })
      })
      return withHost([p1], (h) =>
        Effect.gen(function* () {
          assert.deepStrictEqual(
            (yield* h.tools).map((t) => t.tool.name),
            ["good"]
          )
          const err = yield* Effect.flip(h.invokeTool({ tool: "typo", args: {} }))
          assert.instanceOf(err, UnknownTool)
          const record = (yield* AuditLog.use((a) => a.entries)).find((e) => e.event === "list_tools")
          assert.deepStrictEqual(record?.notes, [
            `tool "typo" rejected for p1: invalid input_schema: input_schema.properties.a.type: "strng" is not a JSON Schema type (string, number, integer, boolean, array, object, null)`
          ])
        })
      )
    }
  )

  it.effect("invoke_tool to a dead owner is a typed error", () => {
    const owner = FakeExtension.make("owner", (req) =>
      req.event === "list_tools"
        ? Effect.succeed({ tools: [{ name: "t", description: "", input_schema: {} }] })
        : req.event === "invoke_tool"
          ? Effect.fail(FakeExtension.FakeExit.code(3))
          : Effect.succeed({})
    )
    return withHost([owner], (h) =>
      Effect.gen(function* () {
        const err = yield* Effect.flip(h.invokeTool({ tool: "t", args: {} }))
        assert.instanceOf(err, ToolOwnerUnavailable)
        assert.include(err.message, "exited (code 3)")
        const again = yield* Effect.flip(h.invokeTool({ tool: "t", args: {} }))
        assert.instanceOf(again, ToolOwnerUnavailable)
      })
    )
  })

  it.effect("a hung extension times out on the clock; later events skip it; the others still apply", () => {
    const hang = FakeExtension.make("hang", (req) => (req.event === "tool_call" ? Effect.never : Effect.succeed({})), {
      timeout_ms: 1000
    })
    return withHost([hang, secretsGuard], (h) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(h.toolCall({ tool: "read", args: { path: "secret" } }))
        yield* TestClock.adjust("1 second")
        const first = yield* Fiber.join(fiber)
        assert.strictEqual(first.decision, "deny")
        const second = yield* h.toolCall({ tool: "read", args: { path: "ok" } })
        assert.strictEqual(second.decision, "allow")
        const entries = yield* AuditLog.use((a) => a.entries)
        const calls = entries.filter((e) => e.event === "tool_call")
        const statusOf = (r: AuditRecord | undefined) => r?.rounds[0]?.exchanges.map((x) => [x.extension, x.status])
        assert.deepStrictEqual(statusOf(calls[0]), [
          ["guard", "replied"],
          ["hang", "timed_out"]
        ])
        assert.deepStrictEqual(statusOf(calls[1]), [
          ["guard", "replied"],
          ["hang", "dead"]
        ])
        const status = yield* h.status
        assert.deepStrictEqual(
          status.map((s) => [s.name, s.state._tag]),
          [
            ["guard", "live"],
            ["hang", "dead"]
          ]
        )
      })
    )
  })

  it.effect("on_failure ask/deny turn a dead guard into ask/deny and withhold tool_result content", () => {
    const broken = (name: string, on_failure: "ask" | "deny") =>
      FakeExtension.make(
        name,
        (req) => Effect.succeed(req.event === "tool_call" || req.event === "tool_result" ? { block: "yes" } : {}),
        { on_failure, events: ["tool_call", "tool_result"] }
      )
    return Effect.gen(function* () {
      for (const mode of ["ask", "deny"] as const) {
        yield* withHost([broken("strict", mode)], (h) =>
          Effect.gen(function* () {
            const first = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
            assert.strictEqual(first.decision, mode)
            assert.include(first.reasons[0]?.reason ?? "", "extension strict unavailable: malformed_reply")
            const later = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
            assert.strictEqual(later.decision, mode)
            const result = yield* h.toolResult({ tool: "bash", args: {}, content: "secret output", is_error: false })
            assert.isTrue(result.is_error)
            assert.notInclude(result.content, "secret output")
            assert.match(result.content, /^\[withheld: extension strict unavailable/)
          })
        )
      }
    })
  })

  it.effect(
    "a reply that says failed is that request's failure under on_failure; the extension lives and answers the next",
    () => {
      // Fails on the calls of `cat` (its code could not judge them), blocks `rm`, and says it failed alongside a block
      // once (the failure stands: its other fields are ignored, and listed).
      const guard = (on_failure: "ignore" | "ask" | "deny") =>
        FakeExtension.fromReplies(
          "guard",
          {
            tool_call: (req) =>
              req.tool === "cat"
                ? { failed: "could not parse the args\u001b[2J" }
                : req.tool === "rm"
                  ? { block: true, reason: "no rm" }
                  : req.tool === "both"
                    ? { failed: "", block: true }
                    : {},
            tool_result: () => ({ failed: "redactor threw" })
          },
          { on_failure, events: ["tool_call", "tool_result"] }
        )
      return Effect.gen(function* () {
        for (const mode of ["ignore", "ask", "deny"] as const) {
          yield* withHost([guard(mode)], (h) =>
            Effect.gen(function* () {
              const failed = yield* h.toolCall({ tool: "cat", args: { path: "a" } })
              assert.strictEqual(failed.decision, mode === "ignore" ? "allow" : mode)
              if (mode !== "ignore")
                assert.deepStrictEqual(failed.reasons, [
                  { extension: "guard", reason: "extension guard could not answer: could not parse the args\\x1b[2J" }
                ])
              const both = yield* h.toolCall({ tool: "both", args: {} })
              assert.strictEqual(both.decision, mode === "ignore" ? "allow" : mode)
              // Alive: its next answer counts.
              assert.strictEqual((yield* h.toolCall({ tool: "rm", args: {} })).decision, "deny")
              assert.strictEqual((yield* h.status)[0]?.state._tag, "live")
              const result = yield* h.toolResult({ tool: "cat", args: {}, content: "secret output", is_error: false })
              if (mode === "ignore") assert.strictEqual(result.content, "secret output")
              else {
                assert.isTrue(result.is_error)
                assert.notInclude(result.content, "secret output")
              }
              const entries = yield* AuditLog.use((a) => a.entries)
              const exchanges = entries.flatMap((e) => e.rounds.flatMap((r) => r.exchanges))
              assert.deepStrictEqual(
                exchanges.filter((x) => x.status === "failed").map((x) => [x.error, x.ignored]),
                [
                  ["failed (the extension could not answer)", undefined],
                  ["failed (the extension could not answer)", ["block"]],
                  ["failed (the extension could not answer)", undefined]
                ]
              )
            })
          )
        }
      })
    }
  )

  it.effect("context: a non-integer keep index is ignored and noted; the filter lives and its drop stands", () => {
    const filter = FakeExtension.fromReplies("filter", { context: () => ({ keep: [0, 2.5] }) })
    return withHost([filter], (h) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* h.context(["public", "private"]), {
          keep: [0],
          messages: ["public"],
          withheld: []
        })
        assert.strictEqual((yield* h.status)[0]?.state._tag, "live")
        const entries = yield* AuditLog.use((a) => a.entries)
        assert.deepStrictEqual(entries.find((e) => e.event === "context")?.notes, [
          "filter: keep indices that name no message ignored: 2.5"
        ])
      })
    )
  })

  it.effect("a BigInt in an in-process reply is malformed, and shown in errors as 7n: never a defect", () => {
    // Only an in-process extension (a fake, a mock layer) can hand the host a BigInt: a process's reply is parsed JSON.
    // JSON cannot carry it (the audit, the next round's request), so unlike a keep index of 2.5 it is no index at all.
    const filter = FakeExtension.fromReplies("filter", { context: () => ({ keep: [0, 1n] }) }, { on_failure: "deny" })
    const wrongId = FakeExtension.fromReplies("wrong-id", { tool_call: () => ({ id: 7n, block: true }) })
    return Effect.gen(function* () {
      yield* withHost([filter], (h) =>
        Effect.gen(function* () {
          const out = yield* h.context(["public", "private"])
          assert.deepStrictEqual(
            [out.keep, out.withheld.map((w) => w.reason)],
            [[], ["extension filter unavailable: malformed_reply: keep: expected JSON (a BigInt is not), got a BigInt"]]
          )
        })
      )
      yield* withHost([wrongId], (h) =>
        Effect.gen(function* () {
          const outcome = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
          assert.strictEqual(outcome.decision, "allow") // on_failure "ignore": the dead guard is skipped
          const state = (yield* h.status)[0]?.state
          assert.deepStrictEqual(state?._tag === "dead" && state.cause, {
            _tag: "unsolicited_output",
            detail: `reply to id 7n while "3" was in flight` // ids 1 and 2: session_start and list_tools
          })
        })
      )
    })
  })

  it.effect(
    "a reply holding a BigInt (in-process only) is malformed: the rewrite is never sent on, the host goes on",
    () => {
      const rewriter = FakeExtension.fromReplies("rewriter", { tool_call: () => ({ args: { command: "ls", n: 1n } }) })
      const guard = FakeExtension.fromReplies("guard", { tool_call: () => ({}) })
      return withHost([rewriter, guard], (h) =>
        Effect.gen(function* () {
          const outcome = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
          assert.deepStrictEqual([outcome.decision, outcome.args, outcome.rounds], ["allow", { command: "ls" }, 1])
          const state = (yield* h.status).find((s) => s.name === "rewriter")?.state
          assert.deepStrictEqual(state?._tag === "dead" && state.cause._tag, "malformed_reply")
        })
      )
    }
  )

  it.effect("an audit record names its session, when it began, the tool and the args as the agent passed them", () => {
    const jail = FakeExtension.fromReplies("jail", {
      tool_call: (req) =>
        str(req.args["path"]).startsWith("/sandbox/") ? {} : { args: { path: `/sandbox/${str(req.args["path"])}` } }
    })
    return withHost([jail], (h) =>
      Effect.gen(function* () {
        yield* h.toolCall({ tool: "read", args: { path: "notes.txt" }, call_id: "c-9" })
        yield* h.toolResult({
          tool: "read",
          args: { path: "/sandbox/notes.txt" },
          content: "x",
          is_error: false,
          call_id: "c-9"
        })
        yield* h.context(["a"])
        const entries = yield* AuditLog.use((a) => a.entries)
        const call = entries.find((e) => e.event === "tool_call")
        // What the guards judged first, and what runs: both in the record.
        assert.deepStrictEqual([call?.session_id, call?.tool, call?.args], ["s-1", "read", { path: "notes.txt" }])
        assert.deepStrictEqual((call?.outcome as { args?: unknown } | undefined)?.args, { path: "/sandbox/notes.txt" })
        assert.match(call?.time ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
        const result = entries.find((e) => e.event === "tool_result")
        assert.deepStrictEqual([result?.tool, result?.args], ["read", { path: "/sandbox/notes.txt" }])
        const context = entries.find((e) => e.event === "context")
        assert.deepStrictEqual([context?.session_id, context?.tool, context?.args], ["s-1", undefined, undefined])
      })
    )
  })

  it.effect("refused input: the record names the tool and keeps none of the args", () =>
    withHost([secretsGuard], (h) =>
      Effect.gen(function* () {
        yield* h.toolCall({ tool: "read", args: { path: "a", n: Infinity } })
        const call = (yield* AuditLog.use((a) => a.entries)).find((e) => e.event === "tool_call")
        assert.deepStrictEqual([call?.tool, call?.args], ["read", undefined])
      })
    )
  )

  it.effect(
    "closed after an interrupted call its extension is still working on: no session_end to it, no timeout waited",
    () =>
      Effect.gen(function* () {
        const seen: Array<string> = []
        // Works on tool_call until the clock moves (it never does here); would answer session_end at once.
        const slow = FakeExtension.make("slow", (request) =>
          Effect.andThen(
            Effect.sync(() => void seen.push(request.event)),
            request.event === "tool_call" ? Effect.never : Effect.succeed({})
          )
        )
        const other = FakeExtension.fromReplies("other", {})
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(FakeHost.host([slow, other]), scope)
        const h = Context.get(context, ExtensionHost)
        const call = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: { command: "ls" } }), {
          startImmediately: true
        })
        yield* Effect.yieldNow
        yield* Fiber.interrupt(call) // the agent went away (Ctrl-C) while slow works on it
        const closing = yield* Effect.forkDetach(Scope.close(scope, Exit.void), { startImmediately: true })
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow
        // Before, session_end queued behind the abandoned call (its timeout), then waited for its own.
        assert.isDefined(closing.pollUnsafe(), "the close waited for the clock")
        assert.deepStrictEqual(seen, ["session_start", "list_tools", "tool_call"])
        const end = (yield* Context.get(context, AuditLog).entries).find((r) => r.event === "session_end")
        assert.deepStrictEqual(
          end?.rounds[0]?.exchanges.map((x) => x.extension),
          ["other"]
        )
        assert.deepStrictEqual(end?.notes, [
          "session_end not sent to slow: still busy with a request whose caller went away"
        ])
      })
  )

  it.effect("a rewrite holding 1e999 (Infinity, which the guards would read as null) is malformed: never run", () => {
    const rewriter = FakeExtension.fromReplies("rewriter", {
      tool_call: () =>
        JSON.parse(`{"args": {"path": "/data", "limit": 1e999}}`) as { args: { path: string; limit: number } }
    })
    const guard = FakeExtension.fromReplies("guard", {
      tool_call: (req) =>
        typeof req.args["limit"] === "number" ? {} : { block: true, reason: "limit must be a number" }
    })
    return withHost([rewriter, guard], (h) =>
      Effect.gen(function* () {
        const outcome = yield* h.toolCall({ tool: "read", args: { path: "/data", limit: 10 } })
        assert.deepStrictEqual(
          [outcome.decision, outcome.args, outcome.rounds],
          ["allow", { path: "/data", limit: 10 }, 1]
        )
        const state = (yield* h.status).find((s) => s.name === "rewriter")?.state
        assert.deepStrictEqual(state?._tag === "dead" && state.cause._tag, "malformed_reply")
      })
    )
  })

  it.effect("args from the agent holding Infinity or NaN are refused before any extension sees them", () => {
    const guard = FakeExtension.fromReplies("guard", { tool_call: () => ({}) })
    return withHost([guard], (h) =>
      Effect.gen(function* () {
        const outcome = yield* h.toolCall({ tool: "read", args: { path: "/data", limit: Infinity } })
        assert.strictEqual(outcome.decision, "deny")
        assert.include(JSON.stringify(outcome.reasons), "holds a number JSON cannot carry")
      })
    )
  })

  it.effect("context: on_failure deny or ask on a failed or dead filter keeps nothing, with the reason", () => {
    const broken = (on_failure: "ask" | "deny" | "ignore") =>
      FakeExtension.fromReplies("filter", { context: () => ({ keep: "all" }) }, { on_failure, events: ["context"] })
    const other = FakeExtension.fromReplies("other", { context: () => ({ keep: [0, 1] }) })
    return Effect.gen(function* () {
      for (const mode of ["ask", "deny"] as const) {
        yield* withHost([broken(mode), other], (h) =>
          Effect.gen(function* () {
            // Fails on this request, then is dead for the next: both keep nothing.
            for (let i = 0; i < 2; i++) {
              const out = yield* h.context(["a", "b"])
              assert.deepStrictEqual(out.keep, [])
              assert.deepStrictEqual(out.messages, [])
              assert.deepStrictEqual(
                out.withheld.map((w) => w.extension),
                ["filter"]
              )
              assert.match(out.withheld[0]?.reason ?? "", /^extension filter unavailable: malformed_reply/)
            }
            const entries = yield* AuditLog.use((a) => a.entries)
            const records = entries.filter((e) => e.event === "context")
            assert.strictEqual(records.length, 2)
            for (const r of records) {
              assert.deepInclude(r.outcome, { keep: [], messages: [] })
              assert.isTrue(r.notes.some((n) => n.startsWith("context withheld: extension filter unavailable")))
            }
          })
        )
      }
      // ignore (the default): the dead filter is skipped and the others decide.
      yield* withHost([broken("ignore"), other], (h) =>
        Effect.gen(function* () {
          assert.deepStrictEqual(yield* h.context(["a", "b"]), { keep: [0, 1], messages: ["a", "b"], withheld: [] })
        })
      )
    })
  })

  it.effect("on_failure ignore (default): a malformed extension is skipped", () => {
    const broken = FakeExtension.fromReplies("broken", { tool_call: () => ["not", "an", "object"] })
    return withHost([broken, silent], (h) =>
      Effect.gen(function* () {
        const out = yield* h.toolCall({ tool: "bash", args: {} })
        assert.strictEqual(out.decision, "allow")
        const entries = yield* AuditLog.use((a) => a.entries)
        const record = entries.find((e) => e.event === "tool_call")
        assert.strictEqual(record?.rounds[0]?.exchanges[0]?.status, "malformed")
        assert.include(record?.rounds[0]?.exchanges[0]?.error ?? "", "reply: expected a JSON object")
      })
    )
  })

  it.effect("startup sends session_start then list_tools; non-subscribers are audited as not_subscribed", () => {
    const seen: Array<string> = []
    const recorder = FakeExtension.make("rec", (req) => Effect.sync(() => (seen.push(req.event), {})))
    const onlyCalls = FakeExtension.fromReplies("calls", {}, { events: ["tool_call"] })
    return withHost([recorder, onlyCalls], (h) =>
      Effect.gen(function* () {
        yield* h.beforeAgentStart("x")
        assert.deepStrictEqual(seen, ["session_start", "list_tools", "before_agent_start"])
        const entries = yield* AuditLog.use((a) => a.entries)
        assert.deepStrictEqual(
          entries.map((e) => [e.seq, e.event]),
          [
            [0, "session_start"],
            [1, "list_tools"],
            [2, "before_agent_start"]
          ]
        )
        assert.deepStrictEqual(
          entries[2]?.rounds[0]?.exchanges.map((x) => [x.extension, x.status]),
          [
            ["calls", "not_subscribed"],
            ["rec", "replied"]
          ]
        )
      })
    )
  })

  it.effect("known fields of another event are ignored and audited", () => {
    const odd = FakeExtension.fromReplies("odd", { tool_call: () => ({ keep: [1], summary: "x" }) })
    return withHost([odd], (h) =>
      Effect.gen(function* () {
        const out = yield* h.toolCall({ tool: "bash", args: {} })
        assert.strictEqual(out.decision, "allow")
        const entries = yield* AuditLog.use((a) => a.entries)
        const record = entries.find((e) => e.event === "tool_call")
        assert.deepStrictEqual(record?.rounds[0]?.exchanges[0]?.ignored, ["keep", "summary"])
      })
    )
  })

  it.effect("policy hooks run first: an allow short-circuits the rules", () => {
    const policy: PolicyConfig = {
      deny: [{ tool: "bash", args: {}, reason: "no shell" }],
      ask: [],
      allow: [],
      default: "allow"
    }
    return withHost(
      [silent],
      (h) =>
        Effect.gen(function* () {
          const out = yield* h.toolCall({ tool: "bash", args: { command: "make" } })
          assert.strictEqual(out.decision, "allow")
          const other = yield* h.toolCall({ tool: "bash", args: { command: "rm" } })
          assert.strictEqual(other.decision, "deny")
        }),
      {
        policy,
        policyHooks: [
          {
            name: "make-ok",
            decide: (call) => Effect.succeed(call.args["command"] === "make" ? "allow" : "abstain")
          }
        ]
      }
    )
  })
})

describe("session_end", () => {
  it.effect("is dispatched once at close, to subscribers only, and audited as the last record", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const recorder = FakeExtension.make("rec", (req) => Effect.sync(() => (seen.push(req.event), {})))
      const other = FakeExtension.fromReplies("calls", {}, { events: ["tool_call"] })
      yield* Effect.gen(function* () {
        const h = yield* ExtensionHost
        yield* h.toolCall({ tool: "bash", args: {} })
      }).pipe(Effect.provide(ExtensionHost.layerFake([recorder, other], { sessionId: "s-1" })))
      assert.deepStrictEqual(seen, ["session_start", "list_tools", "tool_call", "session_end"])
      const entries = yield* AuditLog.use((a) => a.entries)
      const last = entries.at(-1)
      assert.strictEqual(last?.event, "session_end")
      assert.deepStrictEqual(
        last?.rounds[0]?.exchanges.map((x) => [x.extension, x.status]),
        [
          ["calls", "not_subscribed"],
          ["rec", "replied"]
        ]
      )
    }).pipe(Effect.provide(AuditLog.layerMemory))
  )
})

describe("input from the agent never kills the host (docs/design.md#failures)", () => {
  /** An object `depth` levels deep (`{}` is 1). */
  const nest = (depth: number): Record<string, unknown> => {
    let v: Record<string, unknown> = {}
    for (let i = 1; i < depth; i++) v = { x: v }
    return v
  }
  const deep = nest(5000)
  const tool = { name: "t", description: "", input_schema: {} }

  it.effect("args or messages nested too deep fail closed, reach no extension, and are not audited", () => {
    const seen: Array<string> = []
    const rec = FakeExtension.make("rec", (req) => {
      seen.push(req.event)
      return Effect.succeed(req.event === "list_tools" ? { tools: [tool] } : {})
    })
    return withHost([rec], (h) =>
      Effect.gen(function* () {
        const call = yield* h.toolCall({ tool: "bash", args: deep })
        assert.deepStrictEqual(call, {
          decision: "deny",
          reasons: [{ extension: "host", reason: "args nested too deep (a request may nest at most 256 levels)" }],
          args: {},
          rounds: 0
        })
        const result = yield* h.toolResult({ tool: "bash", args: deep, content: "out", is_error: false })
        assert.deepStrictEqual(result, {
          content: "[withheld: args nested too deep (a request may nest at most 256 levels)]",
          is_error: true,
          rounds: 0
        })
        const context = yield* h.context(["fine", deep])
        assert.deepStrictEqual(context.keep, [])
        assert.deepStrictEqual(context.messages, [])
        assert.deepStrictEqual(
          context.withheld.map((w) => w.extension),
          ["host"]
        )
        assert.deepStrictEqual(yield* h.beforeCompact([deep]), { cancel: true, summary: null })
        const invoked = yield* h.invokeTool({ tool: "t", args: deep })
        assert.isTrue(invoked.is_error)
        // A cycle is infinitely deep: the same answer, no hang.
        const cycle: Record<string, unknown> = {}
        cycle["self"] = cycle
        assert.strictEqual((yield* h.toolCall({ tool: "bash", args: cycle })).decision, "deny")
        assert.deepStrictEqual(seen, ["session_start", "list_tools"])
        const entries = yield* AuditLog.use((a) => a.entries)
        const refused = entries.slice(2)
        assert.deepStrictEqual(
          refused.map((e) => [e.event, e.rounds.length]),
          [
            ["tool_call", 0],
            ["tool_result", 0],
            ["context", 0],
            ["before_compact", 0],
            ["invoke_tool", 0],
            ["tool_call", 0]
          ]
        )
        for (const e of refused)
          assert.match(e.notes[0] ?? "", /^not sent to any extension: (args|messages) nested too deep/)
        // Nothing deep reached the records: each one can be written as JSON.
        for (const e of entries) JSON.stringify(e)
      })
    )
  })

  it.effect(
    "the deepest sendable args (255 levels) go out; an extension that echoes them back stays within the reply limit",
    () => {
      const echo = FakeExtension.fromReplies("echo", { tool_call: (req) => ({ args: req.args }) })
      const args = nest(255)
      return withHost([echo], (h) =>
        Effect.gen(function* () {
          const out = yield* h.toolCall({ tool: "bash", args })
          assert.strictEqual(out.decision, "allow")
          assert.strictEqual((yield* h.toolCall({ tool: "bash", args: { x: args } })).decision, "deny")
          assert.strictEqual(out.rounds, 1)
          assert.strictEqual((yield* h.status)[0]?.state._tag, "live")
        })
      )
    }
  )
})

describe("names", () => {
  it.effect("two extensions with one name are refused: the name is their canonical order and identity", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(withHost([silent, FakeExtension.fromReplies("silent", {})], () => Effect.void))
      assert.isTrue(exit._tag === "Failure")
      assert.include(
        String(exit._tag === "Failure" ? Cause.squash(exit.cause) : ""),
        "extension names must be unique: silent"
      )
    })
  )

  it.effect("out-of-range keep indices, however large, are ignored and noted, not fatal", () => {
    const wide = FakeExtension.fromReplies("wide", { context: () => ({ keep: [1, 1e300, -1] }) })
    return withHost([wide], (h) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* h.context(["a", "b"]), { keep: [1], messages: ["b"], withheld: [] })
        const status = yield* h.status
        assert.strictEqual(status[0]?.state._tag, "live")
      })
    )
  })
})

describe("observability", () => {
  it.effect("a span per dispatch; dispatches counted and timed per event; each death counted once, by cause", () =>
    Effect.gen(function* () {
      const spans: Array<Tracer.Span> = []
      const recording = Tracer.make({
        span(options) {
          const span = Tracer.nativeTracer.span(options)
          spans.push(span)
          return span
        }
      })
      const calls = Metric.withAttributes(HostMetrics.dispatches, { event: "tool_call" })
      const timed = Metric.withAttributes(HostMetrics.dispatchLatency, { event: "tool_call" })
      const malformed = Metric.withAttributes(HostMetrics.deaths, { cause: "malformed_reply" })
      const callsBefore = (yield* Metric.value(calls)).count
      const timedBefore = (yield* Metric.value(timed)).count
      const deathsBefore = (yield* Metric.value(malformed)).count
      const broken = FakeExtension.fromReplies("broken", { tool_call: () => ({ ask: 1 }) })
      yield* withHost([broken, silent], (h) =>
        Effect.gen(function* () {
          yield* h.toolCall({ tool: "bash", args: {}, call_id: "c-9" })
          yield* h.toolCall({ tool: "bash", args: {} })
        })
      ).pipe(Effect.withTracer(recording))
      assert.strictEqual((yield* Metric.value(calls)).count, callsBefore + 2)
      // The series exporters see: the exported metric with the event attribute.
      assert.strictEqual((yield* Metric.value(timed)).count, timedBefore + 2)
      assert.strictEqual((yield* Metric.value(malformed)).count, deathsBefore + 1)
      const names = spans.map((s) => s.name)
      assert.deepStrictEqual(
        names.filter((n) => n.startsWith("abhed.") && n !== "abhed.extension"),
        ["abhed.session_start", "abhed.list_tools", "abhed.tool_call", "abhed.tool_call", "abhed.session_end"]
      )
      const call = spans.find((s) => s.name === "abhed.tool_call")
      assert.strictEqual(call?.attributes.get("gen_ai.tool.call.id"), "c-9")
    })
  )

  it.effect(
    "a policy hook runs inside the dispatch's span with a tracer; under effect's nativeTracer no span is made",
    () =>
      Effect.gen(function* () {
        const seen: Array<string> = []
        const hook = {
          name: "spy",
          decide: () =>
            Effect.map(Effect.option(Effect.currentSpan), (span) => {
              seen.push(span._tag === "Some" ? span.value.name : "none")
              return "abstain" as const
            })
        }
        const recording = Tracer.make({ span: (options) => Tracer.nativeTracer.span(options) })
        const twoCalls = (h: ExtensionHost["Service"]) =>
          Effect.andThen(h.toolCall({ tool: "bash", args: {} }), h.toolCall({ tool: "bash", args: {} }))
        yield* withHost([silent], twoCalls, { policyHooks: [hook] }).pipe(Effect.withTracer(recording))
        // Without a backend: the caller's own span is what the hook sees (here one made by the default tracer).
        yield* withHost([silent], twoCalls, { policyHooks: [hook] }).pipe(Effect.withSpan("caller"))
        assert.deepStrictEqual(seen, ["abhed.tool_call", "abhed.tool_call", "caller", "caller"])
      })
  )

  it.effect("a death is counted once, however many later requests find the extension dead", () =>
    Effect.gen(function* () {
      const exited = Metric.withAttributes(HostMetrics.deaths, { cause: "exited" })
      const before = (yield* Metric.value(exited)).count
      // Dies on session_start; the later dispatches find it dead and count nothing more.
      const dies = FakeExtension.make("dies", () => Effect.fail(FakeExtension.FakeExit.code(1)))
      yield* withHost([dies], (h) =>
        Effect.gen(function* () {
          yield* h.toolCall({ tool: "bash", args: {} })
          yield* h.toolCall({ tool: "bash", args: {} })
        })
      )
      assert.strictEqual((yield* Metric.value(exited)).count, before + 1)
    })
  )
})

describe("ExtensionHost.layerMock", () => {
  it.effect("an agent test can provide a plain mock", () =>
    Effect.gen(function* () {
      const h = yield* ExtensionHost
      const out = yield* h.toolCall({ tool: "bash", args: {} })
      assert.strictEqual(out.decision, "deny")
    }).pipe(
      Effect.provide(
        ExtensionHost.layerMock({
          toolCall: (call) => Effect.succeed({ decision: "deny", reasons: [], args: call.args, rounds: 1 })
        })
      )
    )
  )
})

describe("audit sinks that keep nothing", () => {
  // A sink that counts what it is handed; `enabled` says whether it keeps records.
  const counting = (enabled: boolean | undefined) => {
    const seen: Array<AuditRecord> = []
    const layer = Layer.succeed(
      AuditLog,
      AuditLog.of({ record: (r) => Effect.sync(() => void seen.push(r)), entries: Effect.succeed([]), enabled })
    )
    return { seen, layer }
  }
  const decide = (enabled: boolean | undefined) =>
    Effect.gen(function* () {
      const sink = counting(enabled)
      const guard = FakeExtension.fromReplies("guard", { tool_call: () => ({ block: true, reason: "no" }) })
      const outcome = yield* Effect.gen(function* () {
        const h = yield* ExtensionHost
        return yield* h.toolCall({ tool: "bash", args: { command: "rm -rf /" }, call_id: "c-1" })
      }).pipe(
        Effect.provide(ExtensionHost.layerFake([guard, silent], { sessionId: "s-1" }).pipe(Layer.provide(sink.layer)))
      )
      return { outcome, seen: sink.seen }
    })

  it.effect("enabled: false (layerNone): the same outcome, and the sink is never handed a record", () =>
    Effect.gen(function* () {
      const kept = yield* decide(undefined)
      const none = yield* decide(false)
      assert.deepStrictEqual(none.outcome, kept.outcome)
      assert.strictEqual(none.outcome.decision, "deny")
      assert.strictEqual(none.seen.length, 0)
      // session_start, list_tools, tool_call, session_end: every dispatch is recorded when the sink keeps records.
      assert.deepStrictEqual(
        kept.seen.map((r) => r.event),
        ["session_start", "list_tools", "tool_call", "session_end"]
      )
      const call = kept.seen.find((r) => r.event === "tool_call")
      assert.deepStrictEqual(
        call?.rounds[0]?.exchanges.map((x) => [x.extension, x.status]),
        [
          ["guard", "replied"],
          ["silent", "replied"]
        ]
      )
      // A block stops the settling at once (docs/design.md#combination).
      assert.deepStrictEqual(call?.notes, ["policy: allow (default)", "settling: Stopped"])
    })
  )
})
