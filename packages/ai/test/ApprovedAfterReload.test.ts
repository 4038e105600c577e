import { GuardedToolkit, ScriptedModel } from "@abhed/ai"
import {
  Approval,
  AuditLog,
  type Extension,
  ExtensionHost,
  type ExtensionHostShape,
  FakeExtension,
  startExtensions
} from "@abhed/host"
import { type Config, Defaults, type ExtensionConfig } from "@abhed/protocol"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema, type Scope } from "effect"
import { LanguageModel, type Response, Tool, Toolkit } from "effect/ai"

/**
 * An ask waits for the operator, and the config may be reloaded meanwhile (docs/embedding.md#reload). The call the
 * operator approves runs as the set in force when it runs decides: a deny of the new set stands, a new ask asks
 * again, and an approval lifts only the ask it was given for.
 */

const Read = Tool.make("read", { parameters: Schema.Struct({ path: Schema.String }), success: Schema.String })
const Tools = Toolkit.make(Read)
const ran: Array<string> = []
const handlers = Tools.toLayer({ read: ({ path }) => Effect.sync(() => (ran.push(path), `contents of ${path}`)) })

/**
 * Each extension's tool_call answer by name, from its config (a changed config is a changed extension, started
 * again): `asker` asks with its `env.WHY`, `blocker` denies, `quiet` has no opinion.
 */
const start = (x: ExtensionConfig): Effect.Effect<Extension, never, Scope.Scope> =>
  x.name === "waiter"
    ? FakeExtension.make(x.name, (request) => (request.event === "tool_call" ? waiter.turn() : Effect.succeed({})), x)
    : FakeExtension.fromReplies(
        x.name,
        {
          tool_call: () =>
            x.name === "asker"
              ? { ask: true, reason: x.env?.["WHY"] ?? "sure?" }
              : x.name === "blocker"
                ? { block: true, reason: "reads are off" }
                : {}
        },
        x
      )

/** `waiter` has no opinion; once, when it is asked, it first runs `once` (set by the test). */
const waiter = {
  once: undefined as Effect.Effect<void> | undefined,
  turn(): Effect.Effect<unknown> {
    const once = this.once
    this.once = undefined
    return Effect.as(once ?? Effect.void, {})
  }
}

const configOf = (...extensions: ReadonlyArray<ExtensionConfig>): Config => ({
  extensions,
  policy: Defaults.policy,
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: Defaults.builtin_tools
})

const asker = FakeExtension.config("asker")

const host = (first: Config) =>
  ExtensionHost.layerFromExtensions(startExtensions(first.extensions, start), {
    sessionId: "s",
    reloading: { start, baseDir: "/", roots: [], builtinTools: [] }
  }).pipe(Layer.provideMerge(AuditLog.layerMemory))

/** The model calls `read`; the ask ends its turn. */
const askedCall = Effect.gen(function* () {
  const model = yield* ScriptedModel.make([
    () => [ScriptedModel.toolCall("r1", "read", { path: "notes.txt" }), ScriptedModel.finish("tool-calls")]
  ])
  const toolkit = yield* GuardedToolkit.guard(Tools)
  const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
    Effect.provideService(LanguageModel.LanguageModel, model)
  )
  return { toolkit, content: response.content as ReadonlyArray<Response.AnyPart> }
})

/**
 * An operator who, while the first request is shown, reloads `next` (someone edited the config), then answers
 * `answers` in turn; it keeps every request it was shown.
 */
const operator = (h: ExtensionHostShape, next: Config, answers: ReadonlyArray<boolean>) => {
  const shown: Array<Approval.ApprovalRequest> = []
  const layer = Approval.Approver.layer((request) =>
    Effect.gen(function* () {
      if (shown.length === 0) yield* Effect.orDie(h.reload({ config: next }))
      shown.push(request)
      return answers[shown.length - 1] ?? false
    })
  )
  return { shown, layer }
}

const resultOf = (prompt: { readonly content: ReadonlyArray<unknown> }) => JSON.stringify(prompt.content)

const toolCalls = Effect.map(
  AuditLog.use((a) => a.entries),
  (entries) => entries.filter((r) => r.event === "tool_call").map((r) => r.call_id)
)

describe("an ask approved after a reload", () => {
  it.effect("the new set denies the tool: the approved call does not run, and the model reads the new deny", () =>
    Effect.gen(function* () {
      ran.length = 0
      const h = yield* ExtensionHost
      const { toolkit, content } = yield* askedCall
      const op = operator(h, configOf(asker, FakeExtension.config("blocker")), [true])
      const answers = yield* GuardedToolkit.resolveApprovals(toolkit, content).pipe(Effect.provide(op.layer))
      assert.deepStrictEqual(ran, [])
      assert.strictEqual(op.shown.length, 1)
      assert.include(resultOf(answers), "blocker: reads are off")
      // Judged twice: by the set the model called it under, and by the set in force when it was to run.
      assert.deepStrictEqual(yield* toolCalls, ["r1", "r1"])
    }).pipe(Effect.provide(handlers), Effect.provide(host(configOf(asker))))
  )

  it.effect("the new set asks anew (another reason): asked again, and the no stands", () =>
    Effect.gen(function* () {
      ran.length = 0
      const h = yield* ExtensionHost
      const { toolkit, content } = yield* askedCall
      const changed = FakeExtension.config("asker", { env: { WHY: "this one writes" } })
      const op = operator(h, configOf(changed), [true, false])
      const answers = yield* GuardedToolkit.resolveApprovals(toolkit, content).pipe(Effect.provide(op.layer))
      assert.deepStrictEqual(ran, [])
      assert.deepStrictEqual(
        op.shown.map((r) => r.reasons.map((x) => x.reason)),
        [["sure?"], ["this one writes"]]
      )
      assert.include(resultOf(answers), "not approved: asker: this one writes")
    }).pipe(Effect.provide(handlers), Effect.provide(host(configOf(asker))))
  )

  it.effect("the new set asks anew, and the operator says yes again: it runs", () =>
    Effect.gen(function* () {
      ran.length = 0
      const h = yield* ExtensionHost
      const { toolkit, content } = yield* askedCall
      const changed = FakeExtension.config("asker", { env: { WHY: "this one writes" } })
      const op = operator(h, configOf(changed), [true, true])
      yield* GuardedToolkit.resolveApprovals(toolkit, content).pipe(Effect.provide(op.layer))
      assert.deepStrictEqual(ran, ["notes.txt"])
      assert.strictEqual(op.shown.length, 2)
    }).pipe(Effect.provide(handlers), Effect.provide(host(configOf(asker))))
  )

  it.effect("the new set asks the same (same args, same reasons): the yes was for that ask, it runs once asked", () =>
    Effect.gen(function* () {
      ran.length = 0
      const h = yield* ExtensionHost
      const { toolkit, content } = yield* askedCall
      const op = operator(h, configOf(asker, FakeExtension.config("quiet")), [true])
      yield* GuardedToolkit.resolveApprovals(toolkit, content).pipe(Effect.provide(op.layer))
      assert.deepStrictEqual(ran, ["notes.txt"])
      assert.strictEqual(op.shown.length, 1)
    }).pipe(Effect.provide(handlers), Effect.provide(host(configOf(asker))))
  )

  it.effect("the new set no longer asks: the approved call runs, as that set allows", () =>
    Effect.gen(function* () {
      ran.length = 0
      const h = yield* ExtensionHost
      const { toolkit, content } = yield* askedCall
      const op = operator(h, configOf(FakeExtension.config("quiet")), [true])
      yield* GuardedToolkit.resolveApprovals(toolkit, content).pipe(Effect.provide(op.layer))
      assert.deepStrictEqual(ran, ["notes.txt"])
    }).pipe(Effect.provide(handlers), Effect.provide(host(configOf(asker))))
  )

  it.effect("a reload that changed nothing (the same config read again): no new generation, judged once, run", () =>
    Effect.gen(function* () {
      ran.length = 0
      const h = yield* ExtensionHost
      const { toolkit, content } = yield* askedCall
      const op = operator(h, configOf(asker), [true])
      yield* GuardedToolkit.resolveApprovals(toolkit, content).pipe(Effect.provide(op.layer))
      assert.strictEqual(yield* h.generation, 0)
      assert.deepStrictEqual(ran, ["notes.txt"])
      assert.strictEqual(op.shown.length, 1)
      assert.deepStrictEqual(yield* toolCalls, ["r1"])
      // A set that may judge otherwise is one: an extension added.
      yield* Effect.orDie(h.reload({ config: configOf(asker, FakeExtension.config("quiet")) }))
      assert.strictEqual(yield* h.generation, 1)
    }).pipe(Effect.provide(handlers), Effect.provide(host(configOf(asker))))
  )

  it.effect("no reload: asked once, judged once, run", () =>
    Effect.gen(function* () {
      ran.length = 0
      const { toolkit, content } = yield* askedCall
      const shown: Array<unknown> = []
      yield* GuardedToolkit.resolveApprovals(toolkit, content).pipe(
        Effect.provide(Approval.Approver.layer((r) => Effect.sync(() => (shown.push(r), true))))
      )
      assert.deepStrictEqual(ran, ["notes.txt"])
      assert.strictEqual(shown.length, 1)
      assert.deepStrictEqual(yield* toolCalls, ["r1"])
    }).pipe(Effect.provide(handlers), Effect.provide(host(configOf(asker))))
  )
})

describe("a reload between the approval and the run", () => {
  it.effect("the set that judged the approved call is swapped out before it runs: judged again, and denied", () =>
    Effect.gen(function* () {
      ran.length = 0
      const h = yield* ExtensionHost
      const { toolkit, content } = yield* askedCall
      const waiterConfig = FakeExtension.config("waiter")
      // The operator's reload adds `waiter`. Judging the approved call again over that set, `waiter` lets another
      // reload (`blocker` for `waiter`) swap its set in before it answers: the approval was checked against a set
      // that is no longer in force when the call is to run.
      waiter.once = Effect.gen(function* () {
        // Without `waiter`: the new set's `list_tools` would wait for it to answer first.
        yield* Effect.forkDetach(h.reload({ config: configOf(asker, FakeExtension.config("blocker")) }))
        while ((yield* h.generation) < 2) yield* Effect.yieldNow
      })
      const op = operator(h, configOf(asker, waiterConfig), [true])
      const answers = yield* GuardedToolkit.resolveApprovals(toolkit, content).pipe(Effect.provide(op.layer))
      assert.strictEqual(yield* h.generation, 2)
      assert.deepStrictEqual(ran, [])
      assert.strictEqual(op.shown.length, 1)
      assert.include(resultOf(answers), "blocker: reads are off")
    }).pipe(Effect.provide(handlers), Effect.provide(host(configOf(asker))))
  )
})
