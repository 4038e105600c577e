import { assert, describe, it } from "@effect/vitest"
import { type Config, Defaults, type ExtensionConfig } from "@abhed/protocol"
import { Effect, Layer } from "effect"
import {
  Approval,
  AuditLog,
  ExtensionHost,
  FakeExtension,
  startExtensions,
  type ToolCallOutcome
} from "../src/index.ts"

const outcome = (decision: ToolCallOutcome["decision"]): ToolCallOutcome => ({
  decision,
  reasons: decision === "allow" ? [] : [{ extension: "guard", reason: "why" }],
  args: { command: "git push" },
  rounds: 1
})

describe("Approver", () => {
  it.effect("allow runs and deny does not, whatever the approver would say", () =>
    Effect.gen(function* () {
      assert.isTrue(yield* Approval.resolve("bash", outcome("allow")))
      assert.isFalse(yield* Approval.resolve("bash", outcome("deny")))
    }).pipe(Effect.provide(Approval.Approver.layer(() => Effect.succeed(true))))
  )

  it.effect("ask is the approver's call, and it sees the settled args and the reasons", () =>
    Effect.gen(function* () {
      const seen: Array<Approval.ApprovalRequest> = []
      const yes = Approval.Approver.layer((request) => Effect.sync(() => (seen.push(request), true)))
      assert.isTrue(yield* Approval.resolve("bash", outcome("ask")).pipe(Effect.provide(yes)))
      assert.deepStrictEqual(seen, [
        { tool: "bash", args: { command: "git push" }, reasons: [{ extension: "guard", reason: "why" }] }
      ])
      assert.isFalse(yield* Approval.resolve("bash", outcome("ask")).pipe(Effect.provide(Approval.Approver.layerDeny)))
    })
  )
})

/** `asker` asks with its `env.WHY`; `blocker` denies; `quiet` has no opinion. A changed config starts it again. */
const start = (x: ExtensionConfig) =>
  FakeExtension.fromReplies(
    x.name,
    {
      tool_call: () =>
        x.name === "asker"
          ? { ask: true, reason: x.env?.["WHY"] ?? "sure?" }
          : x.name === "blocker"
            ? { block: true, reason: "pushes are off" }
            : {}
    },
    x
  )
const configOf = (...names: ReadonlyArray<string | ExtensionConfig>): Config => ({
  extensions: names.map((x) => (typeof x === "string" ? FakeExtension.config(x) : x)),
  policy: Defaults.policy,
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: Defaults.builtin_tools
})
const reloadable = ExtensionHost.layerFromExtensions(startExtensions(configOf("asker").extensions, start), {
  sessionId: "s",
  reloading: { start, baseDir: "/", roots: [], builtinTools: [] }
}).pipe(Layer.provideMerge(AuditLog.layerMemory))

/**
 * An Approver who, shown the first request, sees the config reloaded to `next` (to each in turn, if several), then
 * answers `answers` in turn.
 */
const operator = (next: Config | ReadonlyArray<Config>, answers: ReadonlyArray<boolean>) => {
  const shown: Array<string> = []
  const layer = Layer.effect(
    Approval.Approver,
    Effect.gen(function* () {
      const h = yield* ExtensionHost
      return Approval.Approver.of({
        approve: (request) =>
          Effect.gen(function* () {
            if (shown.length === 0)
              for (const config of Array.isArray(next) ? next : [next]) yield* Effect.orDie(h.reload({ config }))
            shown.push(request.reasons.map((r) => r.reason).join("; "))
            return answers[shown.length - 1] ?? false
          })
      })
    })
  )
  return { shown, layer }
}

const push = { tool: "bash", args: { command: "git push" } }

describe("Approval.decide: an answer that took a reload to come", () => {
  it.effect(
    "a call given without an id: both judgments of it carry the one id decide gave it, and so does Decided",
    () => {
      const op = operator(configOf("asker", "quiet"), [true])
      return Effect.gen(function* () {
        const decided = yield* Approval.decide(push)
        assert.isTrue(decided.run)
        const records = (yield* AuditLog.use((a) => a.entries)).filter((r) => r.event === "tool_call")
        assert.strictEqual(records.length, 2)
        assert.match(decided.call_id, /^d-\d+$/)
        assert.deepStrictEqual(
          records.map((r) => r.call_id),
          [decided.call_id, decided.call_id]
        )
      }).pipe(Effect.provide(op.layer), Effect.provide(reloadable))
    }
  )

  it.effect(
    "a config flipped A -> B -> A while the operator was asked: judged once more over A, not asked again",
    () => {
      const op = operator([configOf("asker", "blocker"), configOf("asker")], [true])
      return Effect.gen(function* () {
        const decided = yield* Approval.decide({ ...push, call_id: "flip-1" })
        assert.isTrue(decided.run)
        assert.deepStrictEqual(op.shown, ["sure?"])
        const judged = (yield* AuditLog.use((a) => a.entries)).filter((r) => r.call_id === "flip-1")
        assert.strictEqual(judged.length, 2)
      }).pipe(Effect.provide(op.layer), Effect.provide(reloadable))
    }
  )

  it.effect("the new set denies: the yes does not run the call", () => {
    const op = operator(configOf("asker", "blocker"), [true])
    return Effect.gen(function* () {
      const decided = yield* Approval.decide(push)
      assert.isFalse(decided.run)
      assert.strictEqual(decided.outcome.decision, "deny")
      assert.deepStrictEqual(op.shown, ["sure?"])
    }).pipe(Effect.provide(op.layer), Effect.provide(reloadable))
  })

  it.effect("the new set asks anew: asked again; the same ask again: the yes stands", () => {
    const forcing = FakeExtension.config("asker", { env: { WHY: "force push?" } })
    const changed = operator(configOf(forcing), [true, false])
    const same = operator(configOf(forcing, "quiet"), [true])
    return Effect.gen(function* () {
      assert.isFalse((yield* Approval.decide(push).pipe(Effect.provide(changed.layer))).run)
      assert.deepStrictEqual(changed.shown, ["sure?", "force push?"])
      assert.isTrue((yield* Approval.decide(push).pipe(Effect.provide(same.layer))).run)
      assert.deepStrictEqual(same.shown, ["force push?"])
    }).pipe(Effect.provide(reloadable))
  })
})
