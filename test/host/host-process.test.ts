import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { type Config, Defaults, type ExtensionConfig } from "@abhed/protocol"
import {
  AuditLog,
  type AuditRecord,
  ExtensionHost,
  type ExtensionStatus,
  HostMetrics,
  withoutTimings
} from "@abhed/host"
import { Effect, Layer, Metric, References } from "effect"
import * as NodePath from "node:path"
import { exists, fixtureConfig, liveGroupMembers, within } from "../support/extension-helpers.ts"

/**
 * The host over real processes (docs/design.md#combination, #failures): the worked examples (docs/examples), faults next to a working guard,
 * on_failure, concurrency, order independence and settling. Every test checks that no process of any extension
 * outlives the host's scope.
 */

const examples = NodePath.join(import.meta.dirname, "..", "..", "docs", "examples")

const config = (extensions: ReadonlyArray<ExtensionConfig>, overrides?: Partial<Config>): Config => ({
  extensions,
  policy: Defaults.policy,
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: [],
  ...overrides
})

const spec = (name: string, script: string, overrides?: Partial<ExtensionConfig>): ExtensionConfig =>
  fixtureConfig(script, { name, args: [NodePath.join(examples, script)], ...overrides })

interface Run<A> {
  readonly result: A
  readonly audit: ReadonlyArray<AuditRecord>
  readonly status: ReadonlyArray<ExtensionStatus>
}

/**
 * Start a host over `cfg`, run `body`, let the host's scope close, then check that nothing of any extension's
 * process group is left and every extension process was reaped.
 */
const withHost = <A, E>(
  cfg: Config,
  body: (h: ExtensionHost["Service"]) => Effect.Effect<A, E>
): Effect.Effect<Run<A>, E> =>
  Effect.gen(function* () {
    const run = yield* Effect.gen(function* () {
      const h = yield* ExtensionHost
      const result = yield* body(h)
      const audit = yield* AuditLog.use((a) => a.entries)
      const status = yield* h.status
      return { result, audit, status }
    }).pipe(
      Effect.provide(
        ExtensionHost.layer(cfg, { sessionId: "s-1", baseDir: examples }).pipe(Layer.provideMerge(AuditLog.layerMemory))
      )
    )
    for (const s of run.status) {
      if (s.pid === undefined) continue
      assert.deepStrictEqual(liveGroupMembers(s.pid), [], `processes of ${s.name} (group ${s.pid}) outlived the host`)
      assert.isFalse(exists(s.pid), `${s.name} (pid ${s.pid}) outlived the host or was not reaped`)
    }
    return run
  }).pipe(
    Effect.provide(NodeServices.layer),
    // Deaths are expected in these tests; keep the output readable.
    Effect.provideService(References.MinimumLogLevel, "Error")
  )

/** The status of each extension's exchanges in one audit record, by name. */
const statuses = (record: AuditRecord | undefined) =>
  Object.fromEntries((record?.rounds[0]?.exchanges ?? []).map((x) => [x.extension, x.status]))

const deathOf = (status: ReadonlyArray<ExtensionStatus>, name: string) => {
  const s = status.find((x) => x.name === name)
  return s?.state._tag === "dead" ? s.state.cause._tag : s?.state._tag
}

describe("the worked examples of docs/examples, as written", () => {
  it.live('a read of a path containing "secret" is blocked with its reason; others pass', () =>
    Effect.gen(function* () {
      const { result } = yield* withHost(config([spec("guard", "block-secrets.sh", { events: ["tool_call"] })]), (h) =>
        Effect.all([
          h.toolCall({ tool: "read", args: { path: "/home/me/secret/keys.txt" } }),
          h.toolCall({ tool: "read", args: { path: "/home/me/notes.txt" } }),
          h.toolCall({ tool: "bash", args: { command: "cat secret" } })
        ])
      )
      assert.deepStrictEqual(result[0].decision, "deny")
      assert.deepStrictEqual(result[0].reasons, [{ extension: "guard", reason: "secrets are off limits" }])
      assert.strictEqual(result[1].decision, "allow")
      assert.strictEqual(result[2].decision, "allow")
    })
  )

  it.live("an AKIA key in a tool_result is redacted", () =>
    Effect.gen(function* () {
      const { result } = yield* withHost(config([spec("redact", "redact-akia.sh")]), (h) =>
        h.toolResult({
          tool: "bash",
          args: { command: "env" },
          content: "AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\nHOME=/root",
          is_error: false
        })
      )
      assert.deepStrictEqual(result, {
        content: "AWS_ACCESS_KEY_ID=[redacted]\nHOME=/root",
        is_error: false,
        rounds: 2
      })
    })
  )

  it.live("the compaction summary is supplied", () =>
    Effect.gen(function* () {
      const { result } = yield* withHost(config([spec("ticket", "keep-ticket.sh")]), (h) =>
        h.beforeCompact([{ role: "user", content: "fix ABC-123" }])
      )
      assert.deepStrictEqual(result, { cancel: false, summary: "Working on ticket ABC-123. Keep the ticket id." })
    })
  )
})

/** The one fault here that is about a timeout: it never replies, so a short startup timeout is safe on any machine. */
const hangStartupMs = 1000
const hang = (overrides?: Partial<ExtensionConfig>) =>
  fixtureConfig("ext-hang.mjs", { startup_timeout_ms: hangStartupMs, ...overrides })

describe("faults next to a working guard", () => {
  const guard = spec("guard", "block-secrets.sh")
  const faults: ReadonlyArray<{ readonly config: ExtensionConfig; readonly cause: string }> = [
    { config: fixtureConfig("ext-exit-at-start.sh"), cause: "exited" },
    {
      config: fixtureConfig("x.sh", { name: "not-found", command: "/nonexistent/abhed-nope", args: [] }),
      cause: "spawn_failed"
    },
    { config: fixtureConfig("ext-crash.py"), cause: "exited" },
    { config: hang(), cause: "timed_out" },
    { config: fixtureConfig("ext-garbage.sh"), cause: "malformed_reply" },
    { config: fixtureConfig("ext-non-object.sh"), cause: "malformed_reply" },
    { config: fixtureConfig("ext-wrong-types.sh", { events: ["tool_call"] }), cause: "malformed_reply" },
    { config: fixtureConfig("ext-partial-exit.py"), cause: "exited" },
    { config: fixtureConfig("ext-long-line.mjs", { events: ["tool_call"] }), cause: "reply_too_long" },
    { config: fixtureConfig("ext-two-replies.sh"), cause: "unsolicited_output" },
    { config: fixtureConfig("ext-early-output.sh"), cause: "unsolicited_output" },
    { config: fixtureConfig("ext-grandchild.sh"), cause: "exited" }
  ]

  it.live(
    "every fault is skipped, named in status and audit; the guard's verdicts still apply",
    () =>
      Effect.gen(function* () {
        const spawnFailures = Metric.withAttributes(HostMetrics.deaths, { cause: "spawn_failed" })
        const spawnFailuresBefore = (yield* Metric.value(spawnFailures)).count
        const started = Date.now()
        const { audit, result, status } = yield* withHost(
          config([
            guard,
            ...faults.map((f) => f.config),
            // Well-behaved but noisy: stderr floods while it answers must not stall anything. 16 MiB per reply, far
            // more than a pipe holds (the flood's own test in extension-faults sends 100 MiB once; 100 MiB per reply
            // here took longer than the reply timeout on a loaded machine).
            fixtureConfig("ext-stderr-flood.py", { events: ["tool_call"], env: { FLOOD_MIB: "16" } }),
            fixtureConfig("ext-ignore-term.py")
          ]),
          (h) =>
            Effect.gen(function* () {
              const denied = yield* h.toolCall({ tool: "read", args: { path: "secret.txt" } })
              const allowed = yield* h.toolCall({ tool: "read", args: { path: "notes.txt" } })
              return { denied, allowed }
            })
        )
        assert.strictEqual(result.denied.decision, "deny")
        assert.deepStrictEqual(result.denied.reasons, [{ extension: "guard", reason: "secrets are off limits" }])
        assert.strictEqual(result.allowed.decision, "allow")
        for (const f of faults) assert.strictEqual(deathOf(status, f.config.name), f.cause, f.config.name)
        assert.strictEqual(deathOf(status, "ext-stderr-flood"), "live")
        assert.strictEqual(deathOf(status, "ext-ignore-term"), "live")
        // The audit names each failure where it happened, and later dispatches record the extension as dead.
        const lastCall = audit.filter((r) => r.event === "tool_call").at(-1)
        const last = statuses(lastCall)
        for (const f of faults) assert.strictEqual(last[f.config.name], "dead", f.config.name)
        assert.strictEqual(last["guard"], "replied")
        // Every failure's cause is written in the audit, whether a request saw it happen or found it dead.
        const errors = (name: string) =>
          audit
            .flatMap((r) => r.rounds.flatMap((round) => round.exchanges))
            .filter((x) => x.extension === name && x.error !== undefined)
            .map((x) => x.error ?? "")
        for (const f of faults) {
          assert.isTrue(
            errors(f.config.name).some((e) => e.startsWith(f.cause)),
            `${f.config.name}: ${errors(f.config.name)}`
          )
        }
        const seen = (name: string) =>
          audit
            .flatMap((r) => r.rounds.flatMap((round) => round.exchanges))
            .filter((x) => x.extension === name)
            .map((x) => x.status)
        assert.include(seen("ext-hang"), "timed_out")
        assert.include(seen("ext-garbage"), "malformed")
        assert.include(seen("ext-long-line"), "too_long")
        // A death no request saw (the spawn failed) is counted once all the same.
        assert.strictEqual((yield* Metric.value(spawnFailures)).count, spawnFailuresBefore + 1)
        // A sanity bound (not a synchronization): the hang's startup timeout and grace, and 100 MiB of stderr; far
        // below the patient timeouts every other fixture has.
        assert.isBelow(Date.now() - started, within(3000))
      }),
    60_000
  )

  for (const mode of ["ask", "deny"] as const) {
    it.live(
      `on_failure: ${mode} turns a dead guard into ${mode} and withholds tool_result content`,
      () =>
        Effect.gen(function* () {
          const { result } = yield* withHost(
            config([hang({ name: "strict", on_failure: mode, events: ["tool_call", "tool_result"] }), guard]),
            (h) =>
              Effect.gen(function* () {
                const first = yield* h.toolCall({ tool: "read", args: { path: "notes.txt" } })
                const later = yield* h.toolCall({ tool: "read", args: { path: "notes.txt" } })
                const output = yield* h.toolResult({ tool: "read", args: {}, content: "the file", is_error: false })
                return { first, later, output }
              })
          )
          assert.strictEqual(result.first.decision, mode)
          assert.match(result.first.reasons[0]?.reason ?? "", /^extension strict unavailable: timed_out/)
          assert.strictEqual(result.later.decision, mode)
          assert.strictEqual(result.output.is_error, true)
          assert.match(result.output.content, /^\[withheld: extension strict unavailable: timed_out/)
        }),
      30_000
    )
  }
})

describe("shutdown", () => {
  it.live(
    "extensions are closed at once, not one after another",
    () =>
      Effect.gen(function* () {
        // Each ignores SIGTERM and stdin's end: its close takes two graces before SIGKILL.
        const grace = 1000
        const count = 6
        const stubborn = Array.from({ length: count }, (_, i) =>
          fixtureConfig("ext-ignore-term.py", { name: `stubborn-${i}`, grace_ms: grace })
        )
        let closedAt = 0
        const startedClose = yield* withHost(config(stubborn), () => Effect.sync(() => Date.now())).pipe(
          Effect.tap(() => Effect.sync(() => (closedAt = Date.now())))
        )
        // At once: about two graces. One after another: at least 6 × 2 graces, four times the bound. Time is the
        // point here, so the graces are long enough that scheduling on a loaded machine is small next to them.
        assert.isAtLeast(closedAt - startedClose.result, 2 * grace - 20)
        assert.isBelow(closedAt - startedClose.result, 3 * 2 * grace)
        for (const s of startedClose.status) assert.strictEqual(s.state._tag, "live")
      }),
    30_000
  )
})

describe("tools", () => {
  it.live("the agent's own built-in tools and the config's are both protected from extensions", () =>
    Effect.gen(function* () {
      const owner = (tools: string) =>
        fixtureConfig("host-tools.mjs", { name: `p-${tools.replaceAll(",", "-")}`, env: { TOOLS: tools } })
      const cfg = config([owner("bash,grep,word_count")], { builtin_tools: ["bash"] })
      const run = yield* Effect.gen(function* () {
        const h = yield* ExtensionHost
        const listed = yield* h.listTools
        const invoked = yield* h.invokeTool({ tool: "word_count", args: { text: "a b" } })
        yield* h.status
        return { listed, invoked }
      }).pipe(
        Effect.provide(
          ExtensionHost.layer(cfg, { sessionId: "s-1", baseDir: examples, builtinTools: ["grep"] }).pipe(
            Layer.provideMerge(AuditLog.layerMemory)
          )
        ),
        Effect.provide(NodeServices.layer)
      )
      assert.deepStrictEqual(
        run.listed.accepted.map((t) => t.tool.name),
        ["word_count"]
      )
      assert.deepStrictEqual(
        run.listed.rejected.map((r) => [r.name, r.reason]),
        [
          ["bash", "builtin"],
          ["grep", "builtin"]
        ]
      )
      assert.deepStrictEqual(run.invoked, { result: 'word_count:{"text":"a b"}', is_error: false })
    })
  )
})

describe("concurrency and order", () => {
  const echoes = (order: ReadonlyArray<number>) => {
    const all: ReadonlyArray<ExtensionConfig> = [
      fixtureConfig("host-ask-echo.mjs", { name: "n1", env: { ECHO_NAME: "n1" } }),
      fixtureConfig("host-ask-echo.py", { name: "p1", env: { ECHO_NAME: "p1" } }),
      fixtureConfig("host-ask-echo.sh", { name: "b1", env: { ECHO_NAME: "b1" } }),
      fixtureConfig("host-ask-echo.mjs", { name: "n2", env: { ECHO_NAME: "n2" } })
    ]
    return order.map((i) => all[i]).filter((x): x is ExtensionConfig => x !== undefined)
  }

  it.live(
    "50 concurrent tool_calls over 4 extensions: every reply is matched to its own request",
    () =>
      Effect.gen(function* () {
        const ids = Array.from({ length: 50 }, (_, i) => `call-${i}`)
        const { result } = yield* withHost(config(echoes([0, 1, 2, 3])), (h) =>
          Effect.forEach(ids, (id) => h.toolCall({ tool: "bash", args: { command: id }, call_id: id }), {
            concurrency: "unbounded"
          })
        )
        result.forEach((outcome, i) => {
          assert.strictEqual(outcome.decision, "ask")
          assert.deepStrictEqual(
            outcome.reasons,
            ["b1", "n1", "n2", "p1"].map((n) => ({ extension: n, reason: `${n}:${ids[i]}` }))
          )
        })
      }),
    60_000
  )

  it.live(
    "shuffled config orders give identical outcomes and audit records except timings",
    () =>
      Effect.gen(function* () {
        const session = (h: ExtensionHost["Service"]) =>
          Effect.all([
            h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: "c1" }),
            h.toolCall({ tool: "read", args: { path: "secret" }, call_id: "c2" }),
            h.toolResult({ tool: "bash", args: {}, content: "AKIAABCDEFGHIJKLMNOP", is_error: false, call_id: "c1" }),
            h.beforeCompact([])
          ])
        const extra = [
          spec("guard", "block-secrets.sh"),
          spec("redact", "redact-akia.sh"),
          spec("ticket", "keep-ticket.sh"),
          fixtureConfig("ext-garbage.sh")
        ]
        const runs = []
        for (const order of [
          [0, 1, 2, 3],
          [3, 2, 1, 0],
          [2, 0, 3, 1]
        ]) {
          const cfg = config([...echoes(order), ...(order[0] === 0 ? extra : [...extra].reverse())])
          runs.push(yield* withHost(cfg, session))
        }
        const strip = (r: Run<unknown>) => ({
          result: r.result,
          audit: r.audit.map(withoutTimings)
        })
        const [first, ...rest] = runs.map(strip)
        for (const r of rest) assert.deepStrictEqual(r, first)
      }),
    60_000
  )
})

describe("settling over real processes", () => {
  it.live("a guard against rm -rf sees the rewriter's rm -rf /: denied", () =>
    Effect.gen(function* () {
      const { result } = yield* withHost(
        config([
          fixtureConfig("host-rm-guard.sh", { name: "guard" }),
          fixtureConfig("host-rewriter.mjs", { name: "rewriter", env: { FROM: "ls", TO: "rm -rf /" } })
        ]),
        (h) => h.toolCall({ tool: "bash", args: { command: "ls" } })
      )
      assert.strictEqual(result.decision, "deny")
      assert.deepStrictEqual(result.reasons, [{ extension: "guard", reason: "rm -rf is not permitted here" }])
      assert.deepStrictEqual(result.args, { command: "rm -rf /" })
      assert.strictEqual(result.rounds, 2)
    })
  )

  it.live("two redactors compose", () =>
    Effect.gen(function* () {
      const { result } = yield* withHost(
        config([
          spec("akia", "redact-akia.sh"),
          fixtureConfig("host-rewriter.mjs", { name: "passwords", env: { REDACT: "password=\\S+" } })
        ]),
        (h) =>
          h.toolResult({
            tool: "bash",
            args: {},
            content: "key=AKIAABCDEFGHIJKLMNOP password=hunter2",
            is_error: false
          })
      )
      assert.deepStrictEqual(result, { content: "key=[redacted] [redacted]", is_error: false, rounds: 3 })
    })
  )

  it.live("two fighters fail closed", () =>
    Effect.gen(function* () {
      const { result } = yield* withHost(
        config([
          fixtureConfig("host-rewriter.mjs", { name: "one", env: { FIGHT: "1" } }),
          fixtureConfig("host-rewriter.mjs", { name: "two", env: { FIGHT: "2" } })
        ]),
        (h) => h.toolCall({ tool: "bash", args: { command: "ls" } })
      )
      assert.strictEqual(result.decision, "deny")
      assert.strictEqual(result.rounds, Defaults.max_rewrite_rounds)
      assert.deepStrictEqual(result.reasons, [
        { extension: "one", reason: "rewrites did not settle: one, two" },
        { extension: "two", reason: "rewrites did not settle: one, two" }
      ])
    })
  )
})
