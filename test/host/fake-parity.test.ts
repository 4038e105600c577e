import { assert, describe, it } from "@effect/vitest"
import { type Config, Defaults, type ToolCallReply } from "@abhed/protocol"
import { AuditLog, ExtensionHost, FakeExtension } from "@abhed/host"
import { Effect, Fiber, Layer, References } from "effect"
import { TestClock } from "effect/testing"
import { fixture, fixtureConfig } from "../support/extension-helpers.ts"

/**
 * `ExtensionHost.layerFake` decides as the real layer does, for what an embedder tests with it: deny > ask > none,
 * `on_failure` of an extension that crashes or hangs (the fake's timeout under TestClock, the real one's on the
 * wall clock), and the call after the death. Each scenario runs over fakes and over real processes
 * (test/fixtures/faults/ext-fault.sh), and both must give the same outcomes.
 */

interface Spec {
  readonly name: string
  /** Its healthy tool_call reply, as JSON object members ('"block":true,"reason":"no"'); "" is no opinion. */
  readonly reply: string
  readonly fault?: "crash-request" | "hang"
  readonly on_failure?: "ignore" | "ask" | "deny"
}

const TimeoutMs = 1000

/** Each scenario and the decision both layers must give each of its calls. */
const scenarios: ReadonlyArray<readonly [string, ReadonlyArray<Spec>, "allow" | "ask" | "deny"]> = [
  ["none", [{ name: "quiet", reply: "" }], "allow"],
  [
    "ask over none",
    [
      { name: "asker", reply: '"ask":true,"reason":"sure?"' },
      { name: "quiet", reply: "" }
    ],
    "ask"
  ],
  [
    "deny over ask",
    [
      { name: "asker", reply: '"ask":true,"reason":"sure?"' },
      { name: "denier", reply: '"block":true,"reason":"no"' },
      { name: "quiet", reply: "" }
    ],
    "deny"
  ],
  [
    "a crash under on_failure deny",
    [
      { name: "asker", reply: '"ask":true,"reason":"sure?"' },
      { name: "crasher", reply: "", fault: "crash-request", on_failure: "deny" }
    ],
    "deny"
  ],
  [
    "a hang under on_failure ask",
    [
      { name: "quiet", reply: "" },
      { name: "hanger", reply: "", fault: "hang", on_failure: "ask" }
    ],
    "ask"
  ],
  ["a hang under on_failure ignore", [{ name: "hanger", reply: '"block":true,"reason":"no"', fault: "hang" }], "allow"]
]

const hostConfig = (specs: ReadonlyArray<Spec>): Config => ({
  extensions: specs.map((s) =>
    fixtureConfig("ext-fault.sh", {
      name: s.name,
      args: [fixture("faults/ext-fault.sh"), s.fault ?? "none", "tool_call"],
      env: { EXT_NAME: s.name, REPLY_tool_call: s.reply, REPLY_list_tools: "" },
      on_failure: s.on_failure ?? "ignore",
      ...(s.fault === "hang" ? { timeout_ms: TimeoutMs } : {})
    })
  ),
  policy: Defaults.policy,
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: []
})

const fake = (s: Spec) =>
  FakeExtension.make(
    s.name,
    (request) => {
      if (request.event !== "tool_call") return Effect.succeed({})
      if (s.fault === "crash-request") return Effect.fail(FakeExtension.FakeExit.code(7))
      if (s.fault === "hang") return Effect.never
      return Effect.succeed(JSON.parse(`{${s.reply}}`) as ToolCallReply)
    },
    { on_failure: s.on_failure ?? "ignore", timeout_ms: TimeoutMs }
  )

/** Two calls (the fault fires on the first), each outcome with a dead extension's cause cut to its kind. */
const session = (advance: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const h = yield* ExtensionHost
    const outcomes = []
    for (const command of ["first", "second"]) {
      const call = yield* Effect.forkChild(h.toolCall({ tool: "bash", args: { command } }))
      yield* advance
      const outcome = yield* Fiber.join(call)
      outcomes.push({
        decision: outcome.decision,
        reasons: outcome.reasons.map((r) => ({
          extension: r.extension,
          reason: r.reason.replace(/^(extension \S+ unavailable: [a-z_]+).*$/s, "$1")
        }))
      })
    }
    return outcomes
  })

const quiet = References.MinimumLogLevel

describe("layerFake decides as the real layer does", () => {
  for (const [title, specs, decision] of scenarios) {
    it.live(
      title,
      () =>
        Effect.gen(function* () {
          // The real layer's timeout runs on the wall clock; the fakes' under TestClock, moved past it.
          const real = yield* session(Effect.void).pipe(
            Effect.provide(
              ExtensionHost.layer(hostConfig(specs), { sessionId: "s", baseDir: "/" }).pipe(
                Layer.provideMerge(AuditLog.layerNone)
              )
            ),
            Effect.provideService(quiet, "None")
          )
          const faked = yield* session(TestClock.adjust(TimeoutMs)).pipe(
            Effect.provide(
              ExtensionHost.layerFake(specs.map(fake), { sessionId: "s" }).pipe(Layer.provideMerge(AuditLog.layerNone))
            ),
            Effect.provide(TestClock.layer()),
            Effect.provideService(quiet, "None")
          )
          assert.deepStrictEqual(
            real.map((o) => o.decision),
            [decision, decision]
          )
          assert.deepStrictEqual(faked, real)
        }),
      60_000
    )
  }
})
