import { assert, describe, it } from "@effect/vitest"
import { type Config, Defaults, parseConfig } from "@abhed/protocol"
import { AuditLog, ExtensionHost, type ExtensionStatus, HostMetrics } from "@abhed/host"
import { Duration, Effect, Exit, Fiber, Layer, Metric, References, Schedule } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { exists, fixtureConfig, liveGroupMembers, Patient, within } from "../support/extension-helpers.ts"

/**
 * What an embedder relies on, over real processes: an interrupted dispatch leaves no reply to be attributed to the
 * next request; whatever ends the host's scope (an interruption mid-dispatch, a defect in the embedder's code), no
 * extension process outlives it; two hosts in one process keep their audits and ids apart, and their metrics too in registries of their own.
 */

const config = (dir: string, name = "gate"): Config => ({
  extensions: [
    fixtureConfig("gate-echo.mjs", {
      name,
      env: { ECHO_NAME: name, REQUEST_LOG: NodePath.join(dir, `${name}.log`), RELEASE: NodePath.join(dir, "release") }
    })
  ],
  policy: Defaults.policy,
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: []
})

const tempDir = () => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-lifecycle-"))

const host = (cfg: Config, sessionId = "s-1") =>
  ExtensionHost.layer(cfg, { sessionId, baseDir: NodeOs.tmpdir() }).pipe(Layer.provideMerge(AuditLog.layerMemory))

/** Bounded wait until the extension has logged `callId` (it holds the request then). */
const received = (dir: string, callId: string, name = "gate") =>
  Effect.sync(() => {
    const log = NodePath.join(dir, `${name}.log`)
    return NodeFs.existsSync(log) && NodeFs.readFileSync(log, "utf8").split("\n").includes(callId)
  }).pipe(
    Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (seen) => seen }),
    Effect.timeout(Duration.millis(within(2000)))
  )

const nothingLeft = (status: ReadonlyArray<ExtensionStatus>) => {
  for (const s of status) {
    if (s.pid === undefined) continue
    assert.deepStrictEqual(liveGroupMembers(s.pid), [], `processes of ${s.name} (group ${s.pid}) outlived the host`)
    assert.isFalse(exists(s.pid), `${s.name} (pid ${s.pid}) outlived the host or was not reaped`)
  }
}

/** The extension was live at the end of the session, and nothing of it outlived the host. */
const liveThenGone = (status: ReadonlyArray<ExtensionStatus>) => {
  assert.deepStrictEqual(
    status.map((s) => s.state._tag),
    ["live"]
  )
  nothingLeft(status)
}

describe("an embedder's dispatch interrupted midway", () => {
  it.live(
    "the next request gets its own reply, and the extension stays live",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const run = yield* Effect.gen(function* () {
          const h = yield* ExtensionHost
          const held = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: { command: "hold" }, call_id: "a" }))
          yield* received(dir, "a")
          yield* Fiber.interrupt(held)
          const next = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: "b" }))
          NodeFs.writeFileSync(NodePath.join(dir, "release"), "")
          const outcome = yield* Fiber.join(next)
          return { outcome, status: yield* h.status }
        }).pipe(Effect.provide(host(config(dir))))
        assert.strictEqual(run.outcome.decision, "ask")
        assert.deepStrictEqual(run.outcome.reasons, [{ extension: "gate", reason: "gate:b" }])
        liveThenGone(run.status)
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )
})

describe("an embedder's dispatch of a request larger than a pipe holds, interrupted at once", () => {
  it.live(
    "the request is written whole or not at all: the next one gets its own reply, the extension stays live",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const pad = "x".repeat(1 << 20) // 1 MiB: the pipe (64 KiB) cannot take it in one write
        const run = yield* Effect.gen(function* () {
          const h = yield* ExtensionHost
          const outcomes = []
          for (const i of [0, 1, 2]) {
            const big = yield* Effect.forkChild(
              h.toolCall({ tool: "bash", args: { command: "hold", pad }, call_id: `big-${i}` })
            )
            yield* Effect.yieldNow
            yield* Fiber.interrupt(big)
            const next = yield* Effect.forkChild(
              h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: `b-${i}` })
            )
            NodeFs.writeFileSync(NodePath.join(dir, "release"), "")
            outcomes.push((yield* Fiber.join(next)).reasons)
            NodeFs.rmSync(NodePath.join(dir, "release"))
          }
          return { outcomes, status: yield* h.status }
        }).pipe(Effect.provide(host(config(dir))))
        assert.deepStrictEqual(
          run.outcomes,
          [0, 1, 2].map((i) => [{ extension: "gate", reason: `gate:b-${i}` }])
        )
        liveThenGone(run.status)
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )
})

describe("whatever ends the host's scope, no extension outlives it", () => {
  it.live(
    "the program interrupted while a dispatch waits on the extension",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        let status: ReadonlyArray<ExtensionStatus> = []
        const program = yield* Effect.forkChild(
          Effect.gen(function* () {
            const h = yield* ExtensionHost
            status = yield* h.status
            return yield* h.toolCall({ tool: "bash", args: { command: "hold" }, call_id: "a" })
          }).pipe(Effect.provide(host(config(dir))))
        )
        yield* received(dir, "a")
        const exit = yield* Fiber.interrupt(program).pipe(Effect.andThen(Fiber.await(program)))
        assert.isTrue(Exit.hasInterrupts(exit))
        assert.strictEqual(status.length, 1)
        nothingLeft(status)
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )

  it.live(
    "a defect in the embedder's code",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        let status: ReadonlyArray<ExtensionStatus> = []
        const exit = yield* Effect.exit(
          Effect.gen(function* () {
            const h = yield* ExtensionHost
            yield* h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: "a" })
            status = yield* h.status
            return yield* Effect.die(new Error("the agent's own bug"))
          }).pipe(Effect.provide(host(config(dir))))
        )
        assert.isTrue(Exit.hasDies(exit))
        assert.strictEqual(status.length, 1)
        nothingLeft(status)
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )
})

describe("a policy hook of the embedder's that dies mid-dispatch", () => {
  it.live(
    "fails that dispatch with the defect; the next call is decided, and nothing outlives the scope",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const run = yield* Effect.gen(function* () {
          const h = yield* ExtensionHost
          const died = yield* Effect.exit(h.toolCall({ tool: "bash", args: { command: "boom" }, call_id: "a" }))
          const next = yield* h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: "b" })
          return { died, next, status: yield* h.status }
        }).pipe(
          Effect.provide(
            ExtensionHost.layer(config(dir), {
              sessionId: "s-1",
              baseDir: NodeOs.tmpdir(),
              policyHooks: [
                {
                  name: "buggy",
                  decide: (call) =>
                    call.args["command"] === "boom"
                      ? Effect.die(new Error("the hook's bug"))
                      : Effect.succeed("abstain")
                }
              ]
            }).pipe(Layer.provideMerge(AuditLog.layerMemory))
          )
        )
        assert.isTrue(Exit.hasDies(run.died))
        assert.deepStrictEqual(run.next.reasons, [{ extension: "gate", reason: "gate:b" }])
        nothingLeft(run.status)
      }).pipe(Effect.provideService(References.MinimumLogLevel, "None")),
    60_000
  )
})

describe("two hosts in one process", () => {
  it.live(
    "each has its own extensions, audit, call ids, sequence numbers and (in a registry of its own) metrics",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const session = (name: string) =>
          Effect.gen(function* () {
            const h = yield* ExtensionHost
            const outcomes = yield* Effect.forEach(
              ["ls", "pwd"],
              (command) => h.toolCall({ tool: "bash", args: { command } }),
              {
                concurrency: "unbounded"
              }
            )
            const audit = yield* AuditLog.use((a) => a.entries)
            return { outcomes, audit, status: yield* h.status, name }
          }).pipe(
            Effect.provide(host(config(dir, name), `s-${name}`)),
            Effect.flatMap((run) =>
              // What this host counted, in the registry provided around it and its calls (built in it too).
              Effect.map(Metric.value(Metric.withAttributes(HostMetrics.dispatches, { event: "tool_call" })), (m) => ({
                ...run,
                toolCalls: m.count
              }))
            ),
            Effect.provideService(Metric.MetricRegistry, new Map())
          )
        const [one, two] = yield* Effect.all([session("one"), session("two")], { concurrency: "unbounded" })
        for (const run of [one, two]) {
          if (run === undefined) return assert.fail("no run")
          assert.deepStrictEqual(
            run.outcomes.map((o) => o.reasons),
            [[{ extension: run.name, reason: `${run.name}:c-1` }], [{ extension: run.name, reason: `${run.name}:c-2` }]]
          )
          assert.deepStrictEqual(
            run.audit.map((r) => [r.seq, r.session_id, r.event]),
            [
              [0, `s-${run.name}`, "session_start"],
              [1, `s-${run.name}`, "list_tools"],
              [2, `s-${run.name}`, "tool_call"],
              [3, `s-${run.name}`, "tool_call"]
            ]
          )
          assert.strictEqual(run.toolCalls, 2)
          nothingLeft(run.status)
        }
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )
})

describe("many tool calls at once, from several fibers", () => {
  it.live(
    "over the example extensions, each gets the outcome it gets one by one",
    () =>
      Effect.gen(function* () {
        const examples = NodePath.join(import.meta.dirname, "..", "..", "docs", "examples")
        const text = NodeFs.readFileSync(NodePath.join(examples, "abhed.json"), "utf8")
        const parsed = yield* Effect.fromResult(parseConfig(text))
        // Patient timeouts: this test is about attribution, not about the examples' 2 s timeouts.
        const cfg: Config = { ...parsed, extensions: parsed.extensions.map((e) => ({ ...e, ...Patient })) }
        const calls = [
          { tool: "read", args: { path: "config/secrets.json" } },
          { tool: "read", args: { path: "notes.txt" } },
          { tool: "bash", args: { command: "git push origin main" } },
          { tool: "bash", args: { command: "ls -la" } },
          { tool: "bash", args: { command: "cat ~/.aws/credentials" } },
          { tool: "read", args: { path: "src/secret_sauce.ts" } }
        ]
        const results = ["AKIAABCDEFGHIJKLMNOP in a file", "nothing to see", "key=AKIAQQQQQQQQQQQQQQQQ"]
        const layer = ExtensionHost.layer(cfg, { sessionId: "s-1", baseDir: examples }).pipe(
          Layer.provideMerge(AuditLog.layerNone)
        )
        const dispatches = (h: ExtensionHost["Service"]): ReadonlyArray<Effect.Effect<unknown>> =>
          Array.from({ length: 4 }, (_, round) => [
            ...calls.map((c, i) => h.toolCall({ ...c, call_id: `c${round}-${i}` })),
            ...results.map((content, i) =>
              h.toolResult({ tool: "read", args: {}, content, is_error: false, call_id: `r${round}-${i}` })
            )
          ]).flat()
        // One after another, each awaited before the next begins.
        const sequential = yield* Effect.gen(function* () {
          const h = yield* ExtensionHost
          return yield* Effect.forEach(dispatches(h), (d) => d)
        }).pipe(Effect.provide(layer))
        // Each on a fiber of its own, all waiting at once.
        const atOnce = yield* Effect.gen(function* () {
          const h = yield* ExtensionHost
          const fibers = yield* Effect.forEach(dispatches(h), (d) => Effect.forkChild(d))
          const outcomes = yield* Effect.forEach(fibers, Fiber.join)
          return { outcomes, status: yield* h.status }
        }).pipe(Effect.provide(layer))
        assert.deepStrictEqual(atOnce.outcomes, sequential)
        assert.deepStrictEqual(
          atOnce.status.filter((s) => s.state._tag === "dead").map((s) => s.name),
          []
        )
        nothingLeft(atOnce.status)
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    120_000
  )
})
