import { assert, describe, it } from "@effect/vitest"
import { type Config, Defaults, type ExtensionConfig, type Request } from "@abhed/protocol"
import { Deferred, Effect, Exit, Fiber, Logger, Scope } from "effect"
import {
  AuditLog,
  type Extension,
  ExtensionHost,
  type ExtensionHostShape,
  FakeExtension,
  type Reloading,
  startExtensions
} from "../src/index.ts"

/**
 * Reload over fakes: which extensions keep running, which start again, which end; calls in flight finish over the
 * set they began with; a config the host cannot run changes nothing.
 */

/** What each fake instance saw: `name#instance event`. */
interface World {
  readonly log: Array<string>
  readonly starts: Map<string, number>
  /** Per extension name: how it answers a tool_call. */
  readonly toolCall: Map<string, (request: Request) => Effect.Effect<unknown, FakeExtension.FakeExit>>
  /** Instances (`name#instance`) that die on their first request. */
  readonly dying: Set<string>
}

const makeWorld = (): World => ({ log: [], starts: new Map(), toolCall: new Map(), dying: new Set() })

const starter =
  (world: World) =>
  (x: ExtensionConfig): Effect.Effect<Extension, never, Scope.Scope> =>
    Effect.suspend(() => {
      const n = (world.starts.get(x.name) ?? 0) + 1
      world.starts.set(x.name, n)
      const me = `${x.name}#${n}`
      return FakeExtension.make(
        x.name,
        (request) =>
          Effect.suspend(() => {
            world.log.push(`${me} ${request.event}`)
            if (world.dying.has(me)) return Effect.fail(FakeExtension.FakeExit.code(4))
            if (request.event === "list_tools" && x.name.startsWith("tools")) {
              return Effect.succeed({
                tools: [{ name: "lookup", description: "look up", input_schema: { type: "object" } }]
              })
            }
            const answer = request.event === "tool_call" ? world.toolCall.get(x.name) : undefined
            return answer === undefined ? Effect.succeed({}) : answer(request)
          }),
        x,
        { sessionId: "s-1" }
      )
    })

const ext = (name: string, overrides?: Partial<ExtensionConfig>): ExtensionConfig =>
  FakeExtension.config(name, overrides)

const configOf = (extensions: ReadonlyArray<ExtensionConfig>, overrides?: Partial<Config>): Config => ({
  extensions,
  policy: Defaults.policy,
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: Defaults.builtin_tools,
  ...overrides
})

/** A host over `config`'s fakes that can reload; `body` runs in its scope, which closes after. */
const withReloadable = <A, E>(
  world: World,
  config: Config,
  body: (h: ExtensionHostShape) => Effect.Effect<A, E, AuditLog>
) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const reloading: Reloading = { start: starter(world), baseDir: "/", roots: [], builtinTools: [] }
    const h = yield* Effect.gen(function* () {
      const started = yield* startExtensions(config.extensions, reloading.start)
      return yield* ExtensionHost.make(started, {
        sessionId: "s-1",
        policy: config.policy,
        maxRewriteRounds: config.max_rewrite_rounds,
        builtinTools: config.builtin_tools,
        reloading
      })
    }).pipe(Scope.provide(scope))
    const exit = yield* Effect.exit(body(h))
    yield* Scope.close(scope, Exit.void)
    return yield* exit
  }).pipe(Effect.provide(AuditLog.layerMemory))

const names = (h: ExtensionHostShape) => Effect.map(h.status, (all) => all.map((x) => x.name))

/** Yield until `cond` holds (a swap happens in another fiber: no clock involved). */
const until = (cond: Effect.Effect<boolean>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 10_000; i++) {
      if (yield* cond) return
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error("condition never held"))
  })

const events = (world: World, who: string) =>
  world.log.filter((line) => line.startsWith(`${who} `)).map((line) => line.split(" ")[1])

describe("ExtensionHost.reload", () => {
  it.effect(
    "an extension started again that dies is said dead again, and once: its predecessor's word is not its",
    () => {
      const world = makeWorld()
      world.toolCall.set("flaky", () => Effect.fail(FakeExtension.FakeExit.code(3)))
      const warnings: Array<string> = []
      const capture = Logger.make((options) => {
        if (options.logLevel === "Warn") warnings.push(String(options.message))
      })
      return withReloadable(world, configOf([ext("flaky")]), (h) =>
        Effect.gen(function* () {
          const call = h.toolCall({ tool: "bash", args: { command: "ls" } })
          yield* call
          yield* call
          assert.strictEqual(warnings.filter((w) => w.includes("extension flaky is dead")).length, 1)
          // Dead, so started again; the new process dies too: that death is said, and only once.
          assert.deepStrictEqual((yield* h.reload({ config: configOf([ext("flaky")]) })).restarted, ["flaky"])
          yield* call
          yield* call
          assert.strictEqual(world.starts.get("flaky"), 2)
          assert.strictEqual(warnings.filter((w) => w.includes("extension flaky is dead")).length, 2)
          // One added that dies at its session_start: said there, not again at the next call.
          world.dying.add("early#1")
          yield* h.reload({ config: configOf([ext("flaky"), ext("early")]) })
          yield* call
          assert.strictEqual(warnings.filter((w) => w.includes("extension early is dead")).length, 1)
        })
      ).pipe(Effect.provide(Logger.layer([capture])))
    }
  )

  it.effect("keeps the unchanged, restarts the changed, ends the removed, starts the added", () => {
    const world = makeWorld()
    world.toolCall.set("added", () => Effect.succeed({ block: true, reason: "added says no" }))
    return withReloadable(world, configOf([ext("kept"), ext("changed"), ext("removed")]), (h) =>
      Effect.gen(function* () {
        const report = yield* h.reload({
          config: configOf([ext("kept"), ext("changed", { timeout_ms: 1234 }), ext("added")])
        })
        assert.deepStrictEqual(
          { kept: report.kept, restarted: report.restarted, removed: report.removed, added: report.added },
          { kept: ["kept"], restarted: ["changed"], removed: ["removed"], added: ["added"] }
        )
        assert.notStrictEqual(report.before, report.after)
        assert.deepStrictEqual(yield* names(h), ["added", "changed", "kept"])
        // The kept one was never started again nor told the session started or ended.
        assert.deepStrictEqual(world.starts.get("kept"), 1)
        assert.deepStrictEqual(events(world, "kept#1"), ["session_start", "list_tools", "list_tools"])
        assert.deepStrictEqual(events(world, "changed#1"), ["session_start", "list_tools", "session_end"])
        assert.deepStrictEqual(events(world, "changed#2"), ["session_start", "list_tools"])
        assert.deepStrictEqual(events(world, "removed#1"), ["session_start", "list_tools", "session_end"])
        assert.deepStrictEqual(events(world, "added#1"), ["session_start", "list_tools"])
        const denied = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.strictEqual(denied.decision, "deny")
        assert.deepStrictEqual(denied.reasons, [{ extension: "added", reason: "added says no" }])
        assert.deepStrictEqual(events(world, "removed#1"), ["session_start", "list_tools", "session_end"])
        assert.include(events(world, "changed#2"), "tool_call")
        assert.notInclude(events(world, "changed#1"), "tool_call")
        const records = yield* (yield* AuditLog).entries
        const reload = records.find((r) => r.event === "reload")
        assert.deepStrictEqual(reload?.outcome, {
          kept: ["kept"],
          restarted: ["changed"],
          removed: ["removed"],
          added: ["added"]
        })
        assert.deepStrictEqual(reload?.reload, { before: report.before, after: report.after })
        // One sequence across the sets: no two records share a number.
        const seqs = records.map((r) => r.seq)
        assert.deepStrictEqual(new Set(seqs).size, seqs.length)
      })
    )
  })

  it.effect("the same config again keeps everything and starts nothing", () => {
    const world = makeWorld()
    const config = configOf([ext("a"), ext("b")])
    return withReloadable(world, config, (h) =>
      Effect.gen(function* () {
        const report = yield* h.reload({ config })
        assert.deepStrictEqual(report.kept, ["a", "b"])
        assert.deepStrictEqual([report.restarted, report.removed, report.added], [[], [], []])
        assert.strictEqual(report.before, report.after)
        assert.deepStrictEqual([...world.starts.values()], [1, 1])
      })
    )
  })

  it.effect("a call in flight finishes over the set it began with; the removed extension ends after it", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const received = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      world.toolCall.set("slow", () =>
        Effect.andThen(Deferred.succeed(received, undefined), Deferred.await(release)).pipe(
          Effect.as({ ask: true, reason: "slow asks" })
        )
      )
      world.toolCall.set("strict", () => Effect.succeed({ block: true, reason: "strict says no" }))
      yield* withReloadable(world, configOf([ext("slow")]), (h) =>
        Effect.gen(function* () {
          const inFlight = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: { command: "ls" } }))
          yield* Deferred.await(received)
          const reloading = yield* Effect.forkChild(h.reload({ config: configOf([ext("strict")]) }))
          yield* until(Effect.map(names(h), (all) => all.includes("strict")))
          // New calls go to the new set at once, while the old one still holds the call in flight.
          const now = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
          assert.deepStrictEqual(now.reasons, [{ extension: "strict", reason: "strict says no" }])
          assert.notInclude(events(world, "slow#1"), "session_end")
          assert.isUndefined(reloading.pollUnsafe())
          yield* Deferred.succeed(release, undefined)
          const before = yield* Fiber.join(inFlight)
          assert.strictEqual(before.decision, "ask")
          assert.deepStrictEqual(before.reasons, [{ extension: "slow", reason: "slow asks" }])
          const report = yield* Fiber.join(reloading)
          assert.deepStrictEqual([report.removed, report.added], [["slow"], ["strict"]])
          assert.deepStrictEqual(events(world, "slow#1"), ["session_start", "list_tools", "tool_call", "session_end"])
          // The host said session_end once the call was done, not its own close sequence after a skipped one.
          const records = yield* (yield* AuditLog).entries
          const ends = records.filter((r) => r.event === "session_end")
          assert.deepStrictEqual(
            ends.map((r) => [r.notes, r.rounds[0]?.exchanges.map((x) => [x.extension, x.status])]),
            [[[], [["slow", "replied"]]]]
          )
        })
      )
    })
  })

  it.effect("a dead extension, unchanged, is started again", () => {
    const world = makeWorld()
    world.toolCall.set("fragile", (request) =>
      Effect.suspend(() =>
        world.starts.get("fragile") === 1
          ? Effect.fail(FakeExtension.FakeExit.code(3))
          : Effect.succeed({ block: true, reason: `${request.event} refused` })
      )
    )
    return withReloadable(world, configOf([ext("fragile")]), (h) =>
      Effect.gen(function* () {
        yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.strictEqual((yield* h.status)[0]?.state._tag, "dead")
        const report = yield* h.reload({ config: configOf([ext("fragile")]) })
        assert.deepStrictEqual([report.kept, report.restarted], [[], ["fragile"]])
        assert.strictEqual((yield* h.status)[0]?.state._tag, "live")
        const outcome = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.deepStrictEqual(outcome.reasons, [{ extension: "fragile", reason: "tool_call refused" }])
      })
    )
  })

  it.effect("a call whose caller went away does not hold a reload up", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const received = yield* Deferred.make<void>()
      world.toolCall.set("stuck", () => Effect.andThen(Deferred.succeed(received, undefined), Effect.never))
      yield* withReloadable(world, configOf([ext("stuck")]), (h) =>
        Effect.gen(function* () {
          const call = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: { command: "ls" } }))
          yield* Deferred.await(received)
          yield* Fiber.interrupt(call)
          const report = yield* h.reload({ config: configOf([ext("other")]) })
          assert.deepStrictEqual([report.removed, report.added], [["stuck"], ["other"]])
          assert.deepStrictEqual(yield* names(h), ["other"])
        })
      )
    })
  })

  it.effect("a config it cannot run is rejected, and the set running stays as it was", () => {
    const world = makeWorld()
    world.toolCall.set("guard", () => Effect.succeed({ block: true, reason: "guard says no" }))
    return withReloadable(world, configOf([ext("guard")]), (h) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(h.reload({ config: configOf([ext("x"), ext("x", { timeout_ms: 5 })]) }))
        assert.strictEqual(error._tag, "ReloadRejected")
        assert.include(error.message, "extension names must be unique: x")
        assert.deepStrictEqual(yield* names(h), ["guard"])
        assert.deepStrictEqual([...world.starts.keys()], ["guard"])
        const still = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.deepStrictEqual(still.reasons, [{ extension: "guard", reason: "guard says no" }])
        const records = yield* (yield* AuditLog).entries
        assert.isUndefined(records.find((r) => r.event === "reload"))
      })
    )
  })

  it.effect("the policy, builtin_tools and max_rewrite_rounds switch with the set", () => {
    const world = makeWorld()
    return withReloadable(world, configOf([ext("tools-a")]), (h) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(
          (yield* h.tools).map((t) => t.tool.name),
          ["lookup"]
        )
        const open = yield* h.toolCall({ tool: "bash", args: { command: "rm -rf /" } })
        assert.strictEqual(open.decision, "allow")
        yield* h.reload({
          config: configOf([ext("tools-a")], {
            builtin_tools: ["lookup"],
            policy: { ...Defaults.policy, deny: [{ tool: "bash", args: {}, reason: "no shell" }] }
          })
        })
        assert.deepStrictEqual(yield* h.tools, [])
        const shut = yield* h.toolCall({ tool: "bash", args: { command: "rm -rf /" } })
        assert.strictEqual(shut.decision, "deny")
        // Unchanged definition: the same extension, asked for its tools again under the new builtin_tools.
        assert.deepStrictEqual(world.starts.get("tools-a"), 1)
      })
    )
  })

  it.effect("a host over extensions given to it can keep and remove, but refuses to start one", () =>
    Effect.gen(function* () {
      const h = yield* ExtensionHost
      const error = yield* Effect.flip(h.reload({ config: configOf([ext("one"), ext("two")]) }))
      assert.include(error.message, "cannot start any: two")
      const report = yield* h.reload({ config: configOf([]) })
      assert.deepStrictEqual(report.removed, ["one"])
      assert.deepStrictEqual(yield* names(h), [])
    }).pipe(
      Effect.provide(ExtensionHost.layerFake([FakeExtension.fromReplies("one", {})], { sessionId: "s-1" })),
      Effect.provide(AuditLog.layerMemory)
    )
  )
})
