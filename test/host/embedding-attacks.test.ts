import { GuardedToolkit, ScriptedModel } from "@abhed/ai"
import { AuditLog, ExtensionHost, type ExtensionHostShape, HostClosed } from "@abhed/host"
import { Defaults } from "@abhed/protocol"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, References, Schema } from "effect"
import { LanguageModel, Tool, Toolkit } from "effect/ai"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fixtureConfig, Patient } from "../support/extension-helpers.ts"

/**
 * An embedder's mistakes and an attacker's tricks against the effect/ai bridge, over real extension processes:
 * whatever path a call takes, no tool runs that no extension judged.
 */

const Read = Tool.make("read", { parameters: Schema.Struct({ path: Schema.String }), success: Schema.String })
const Wait = Tool.make("wait", { parameters: Schema.Struct({ seconds: Schema.Number }), success: Schema.String })
const Tools = Toolkit.make(Read, Wait)

const host = (log?: string) =>
  ExtensionHost.layer(
    {
      // Blocks every read of a path with "secret" in it; the echo logs every request line it reads.
      extensions: [
        fixtureConfig("cli-block-reads.sh"),
        ...(log === undefined ? [] : [fixtureConfig("ext-echo.mjs", { env: { ABHED_FIXTURE_LOG: log } })])
      ],
      policy: Defaults.policy,
      max_rewrite_rounds: Defaults.max_rewrite_rounds,
      builtin_tools: []
    },
    { sessionId: "s-attacks", baseDir: NodeOs.tmpdir() }
  ).pipe(Layer.provideMerge(AuditLog.layerMemory))

/** A call that waits longer than any answer here may take hung: said, rather than the test's own timeout. */
const notHung =
  (what: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.timeoutOrElse(self, {
      duration: Duration.millis(Patient.timeout_ms),
      orElse: () => Effect.die(`${what} hung`)
    })

describe("a guarded toolkit that outlived the host's scope", () => {
  it.live(
    "runs nothing: the model reads that the host is closed, at once; results and context are withheld",
    () =>
      Effect.gen(function* () {
        const ran: Array<string> = []
        const handlers = Tools.toLayer({
          read: ({ path }) => Effect.sync(() => (ran.push(path), `contents of ${path}`)),
          wait: ({ seconds }) => Effect.sync(() => (ran.push(String(seconds)), "waited"))
        })
        // The embedder's mistake: the toolkit (and the host) kept past the scope that owned the extensions.
        const { toolkit, escaped } = yield* Effect.gen(function* () {
          const toolkit = yield* GuardedToolkit.guard(Tools)
          const h = yield* ExtensionHost
          const inScope = yield* h.toolCall({ tool: "read", args: { path: "secret.txt" }, call_id: "in" })
          assert.strictEqual(inScope.decision, "deny")
          return { toolkit, escaped: h as ExtensionHostShape }
        }).pipe(Effect.provide(Layer.merge(host(), handlers)))

        const model = yield* ScriptedModel.make([
          () => [ScriptedModel.toolCall("late", "read", { path: "secret.txt" }), ScriptedModel.finish("tool-calls")]
        ])
        const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
          Effect.provideService(LanguageModel.LanguageModel, model),
          Effect.provide(handlers),
          notHung("a call after close")
        )
        assert.deepStrictEqual(ran, [])
        const result = response.toolResults[0]
        assert.isDefined(result)
        assert.isTrue(result.isFailure)
        assert.deepStrictEqual(result.result, {
          type: "execution-denied",
          reason: `host: ${HostClosed}`
        })

        const withheld = yield* escaped
          .toolResult({ tool: "read", args: { path: "a" }, content: "AKIAABCDEFGHIJKLMNOP", is_error: false })
          .pipe(notHung("a result after close"))
        assert.isFalse(withheld.content.includes("AKIA"))
        assert.isTrue(withheld.is_error)
        const context = yield* escaped.context([{ role: "user", content: "hi" }]).pipe(notHung("context after close"))
        assert.deepStrictEqual(context.keep, [])
        assert.strictEqual(context.withheld.length, 1)
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )
})

describe("args that a JSON reader might read otherwise than the guard", () => {
  it.live(
    "duplicate keys, __proto__, a lone surrogate, 1e400: the handler runs with exactly what the guard read, or not at all",
    () =>
      Effect.gen(function* () {
        const log = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-attacks-")), "requests")
        const ran: Array<unknown> = []
        const handlers = Tools.toLayer({
          read: (params) => Effect.sync(() => (ran.push(params), "read")),
          wait: (params) => Effect.sync(() => (ran.push(params), "waited"))
        })
        // As a provider's JSON reader hands them over: the last of two keys wins, `__proto__` is an own key.
        const calls = [
          ["dup", "read", '{"path":"notes.txt","path":"secret.txt"}'],
          ["proto", "read", '{"__proto__":{"path":"secret.txt"},"path":"notes.txt"}'],
          ["surrogate", "read", '{"path":"secret\\ud800.txt"}'],
          ["huge", "wait", '{"seconds":1e400}']
        ] as const
        const model = yield* ScriptedModel.make([
          () => [
            ...calls.map(([id, tool, raw]) => ScriptedModel.toolCall(id, tool, JSON.parse(raw))),
            ScriptedModel.finish("tool-calls")
          ]
        ])
        const response = yield* Effect.gen(function* () {
          const toolkit = yield* GuardedToolkit.guard(Tools)
          return yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
            Effect.provideService(LanguageModel.LanguageModel, model)
          )
        }).pipe(Effect.provide(Layer.merge(host(log), handlers)))
        const outcome = Object.fromEntries(
          response.toolResults.map((r) => [r.id, r.isFailure ? JSON.stringify(r.result) : "ran"])
        )
        assert.include(outcome["dup"], "secrets are off limits")
        assert.include(outcome["surrogate"], "secrets are off limits")
        assert.include(outcome["huge"], "Infinity or NaN")
        assert.strictEqual(outcome["proto"], "ran")
        // The only call that ran is the one the guard was shown, as it ran: its args without the key the tool
        // does not take.
        assert.deepStrictEqual(ran, [{ path: "notes.txt" }])
        const seen = NodeFs.readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line))
          .filter((r) => r.event === "tool_call")
        // The calls are judged at once: in any order.
        assert.deepStrictEqual(Object.fromEntries(seen.map((r) => [r.call_id, r.args])), {
          dup: { path: "secret.txt" },
          proto: { path: "notes.txt" },
          surrogate: { path: "secret\ud800.txt" }
        })
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )
})
