import { Agent, type ExtensionToolkit, GuardedToolkit, ScriptedModel } from "@abhed/ai"
import { Approval, AuditLog, ExtensionHost, FakeExtension } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { LanguageModel, Tool, Toolkit } from "effect/ai"

/** The agent loop in one call: guarded, approvals answered, done when the model is. */

const Read = Tool.make("read", { parameters: Schema.Struct({ path: Schema.String }), success: Schema.String })
const Tools = Toolkit.make(Read)
const ran: Array<string> = []
const handlers = Tools.toLayer({ read: ({ path }) => Effect.sync(() => (ran.push(path), `contents of ${path}`)) })

const host = ExtensionHost.layerFake(
  [
    FakeExtension.fromReplies("guard", {
      tool_call: (req) => {
        const path = String(req.args["path"])
        return path.includes("secret")
          ? { block: true, reason: "no secrets" }
          : path.includes("ask")
            ? { ask: true, reason: "sure?" }
            : {}
      },
      before_agent_start: () => ({ system: "Never read secrets." })
    })
  ],
  { sessionId: "s" }
).pipe(Layer.provideMerge(AuditLog.layerMemory))

const script: ReadonlyArray<ScriptedModel.Turn> = [
  () => [
    ScriptedModel.toolCall("c1", "read", { path: "secret.txt" }),
    ScriptedModel.toolCall("c2", "read", { path: "notes.txt" }),
    ScriptedModel.toolCall("c3", "read", { path: "ask.txt" }),
    ScriptedModel.finish("tool-calls")
  ],
  () => [ScriptedModel.text("all done"), ScriptedModel.finish("stop")]
]

describe("Agent.run", () => {
  it.effect("guards every call, answers the asks through the Approver, and returns when the model is done", () =>
    Effect.gen(function* () {
      ran.length = 0
      const model = yield* ScriptedModel.make(script)
      const done = yield* Agent.run({
        toolkit: Tools,
        prompt: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "go" }
        ]
      }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model),
        Effect.provide(Approval.Approver.layer((request) => Effect.succeed(request.args["path"] === "ask.txt")))
      )
      assert.strictEqual(done.text, "all done")
      assert.strictEqual(done.turns, 2)
      assert.sameMembers(ran, ["notes.txt", "ask.txt"])
      const seen = JSON.stringify(model.prompts[1])
      assert.include(seen, "guard: no secrets")
      assert.include(seen, "contents of ask.txt")
      assert.include(JSON.stringify(model.prompts[0]), "Be brief.\\n\\nNever read secrets.")
    }).pipe(Effect.provide(handlers), Effect.provide(host))
  )

  it.effect("a turn with tool calls goes on to the next even when the provider said finish: stop", () =>
    Effect.gen(function* () {
      ran.length = 0
      const model = yield* ScriptedModel.make([
        () => [ScriptedModel.toolCall("s1", "read", { path: "notes.txt" }), ScriptedModel.finish("stop")],
        () => [ScriptedModel.text("read it"), ScriptedModel.finish("stop")]
      ])
      const done = yield* Agent.run({ toolkit: Tools, prompt: "go" }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model),
        Effect.provide(Approval.Approver.layerDeny)
      )
      assert.deepStrictEqual([done.text, done.turns], ["read it", 2])
      assert.include(JSON.stringify(model.prompts[1]), "contents of notes.txt")
    }).pipe(Effect.provide(handlers), Effect.provide(host))
  )

  it.effect("a model that never stops calling tools: TurnLimitReached, with the history so far", () =>
    Effect.gen(function* () {
      const again: ScriptedModel.Turn = () => [
        ScriptedModel.toolCall(`c${Math.random()}`, "read", { path: "a" }),
        ScriptedModel.finish("tool-calls")
      ]
      const model = yield* ScriptedModel.make([again, again, again])
      const error = yield* Effect.flip(
        Agent.run({ toolkit: Tools, prompt: "go", maxTurns: 2 }).pipe(
          Effect.provideService(LanguageModel.LanguageModel, model),
          Effect.provide(Approval.Approver.layerDeny)
        )
      )
      assert.strictEqual(error._tag, "TurnLimitReached")
      if (error._tag !== "TurnLimitReached") return
      assert.strictEqual(error.maxTurns, 2)
      assert.strictEqual(model.prompts.length, 2)
      assert.strictEqual(error.history.content.filter((m) => m.role === "tool").length, 2)
    }).pipe(Effect.provide(handlers), Effect.provide(host))
  )
})

/**
 * Requirements are exact: leaving out the Approver is a type error (it used to compile, the requirements being
 * `any`, and crash at the first ask with `Service not found`). `pnpm typecheck` checks these; they never run.
 */
export const typeChecks = (model: Layer.Layer<LanguageModel.LanguageModel>) => {
  const run = Agent.run({ toolkit: Tools, prompt: "go" }).pipe(
    Effect.provide(handlers),
    Effect.provide(model),
    Effect.provide(host)
  )
  // @ts-expect-error the Approver is missing
  const missing: Effect.Effect<Agent.Done, unknown, never> = run
  const complete: Effect.Effect<Agent.Done, unknown, never> = run.pipe(Effect.provide(Approval.Approver.layerDeny))

  const resolve = (toolkit: GuardedToolkit.Guarded<ExtensionToolkit.WithExtensions<typeof Tools.tools>>) =>
    GuardedToolkit.resolveApprovals(toolkit, []).pipe(Effect.provide(handlers))
  // @ts-expect-error the Approver is missing
  const unanswered: (toolkit: Parameters<typeof resolve>[0]) => Effect.Effect<unknown, unknown, never> = resolve
  return { missing, complete, unanswered }
}
