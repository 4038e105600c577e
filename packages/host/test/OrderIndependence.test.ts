import { assert, describe, it } from "@effect/vitest"
import type { Request } from "@abhed/protocol"
import { Duration, Effect, Fiber, Layer, References, type Scope } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { AuditLog, type Extension, ExtensionHost, withoutTimings } from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"

/**
 * docs/design.md#combination: load order never changes any outcome, verdict, text or audit record (but for timings).
 * Extensions are drawn from a pool of behaviours that touch every event, including ones that fight, break and
 * redact. Two properties:
 *
 * - schedules: the same set, with random faults (hang, crash, garbage) at fixed requests, under two random
 *   schedules (every reply after its own random delay on the TestClock, the clock driven in random steps, and the
 *   config in random order) gives deep-equal outcomes and audit records. This is where order could leak in: replies
 *   arrive, and deaths happen, in a different order in every schedule.
 * - config order alone: a cheap smoke test (the host sorts by name before anything happens).
 */

const str = (u: unknown) => (typeof u === "string" ? u : (JSON.stringify(u) ?? ""))

type Behaviour = (req: Request) => unknown
const behaviours: ReadonlyArray<Behaviour> = [
  () => ({}),
  (req) => (req.event === "tool_call" && str(req.args).includes("secret") ? { block: true, reason: "secret" } : {}),
  (req) => (req.event === "tool_call" ? { ask: true, reason: `ask ${req.call_id}` } : {}),
  (req) =>
    req.event === "tool_call" && !str(req.args["command"]).startsWith("wrap ")
      ? { args: { ...req.args, command: `wrap ${str(req.args["command"])}` } }
      : {},
  (req) => (req.event === "tool_call" ? { args: { fight: 1 } } : req.event === "tool_result" ? { content: "A" } : {}),
  (req) => (req.event === "tool_call" ? { args: { fight: 2 } } : req.event === "tool_result" ? { content: "B" } : {}),
  (req) => (req.event === "tool_result" ? { content: req.content.replaceAll("KEY", "[r]"), is_error: true } : {}),
  (req) => (req.event === "context" ? { keep: [0, 2, 7] } : req.event === "before_agent_start" ? { system: "x" } : {}),
  (req) => (req.event === "context" ? { keep: [2, 1] } : req.event === "before_compact" ? { summary: "s" } : {}),
  (req) =>
    req.event === "before_compact" ? { cancel: true } : req.event === "before_agent_start" ? { system: "y" } : {},
  (req) =>
    req.event === "list_tools"
      ? {
          tools: [
            { name: "shared", description: "", input_schema: {} },
            { name: `own`, description: "", input_schema: {} }
          ]
        }
      : {},
  (req) => (req.event === "tool_call" ? { block: "yes" } : {}), // malformed: dies on the first tool_call
  () => "garbage", // malformed at once
  (req) => (req.event === "tool_call" ? { block: true, ask: true, reason: "both" } : {})
]

const behaviourOf = (i: number): Behaviour => behaviours[i] ?? (() => ({}))

/**
 * The session a run plays, one dispatch at a time (as an agent does): session_start and list_tools (the startup),
 * tool_call (settling, fights, deny), tool_result (redaction, fights, withholding) and context; with `every`, the
 * other events too.
 */
const session = (fakes: ReadonlyArray<Effect.Effect<Extension, never, Scope.Scope>>, every: boolean) =>
  Effect.gen(function* () {
    const h = yield* ExtensionHost
    const outcomes: Array<unknown> = [
      yield* h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: "c1" }),
      yield* h.toolCall({ tool: "read", args: { path: "secret" }, call_id: "c2" }),
      yield* h.toolResult({ tool: "bash", args: {}, content: "KEY out", is_error: false, call_id: "c1" }),
      yield* h.context(["a", "b", "c"]),
      yield* h.tools
    ]
    if (every) outcomes.push(yield* h.beforeAgentStart("base"), yield* h.beforeCompact([]), yield* h.listTools)
    const audit = yield* AuditLog.use((a) => a.entries)
    return { outcomes, audit: audit.map(withoutTimings) }
  }).pipe(
    Effect.provide(
      ExtensionHost.layerFake(fakes, { sessionId: "s", maxRewriteRounds: 3, builtinTools: ["bash"] }).pipe(
        Layer.provideMerge(AuditLog.layerMemory)
      )
    ),
    // Deaths are expected here; keep the test output readable.
    Effect.provideService(References.MinimumLogLevel, "Error")
  )

type OnFailure = "ignore" | "ask" | "deny"

/** Config order only: replies at once. */
const run = (set: ReadonlyArray<{ name: string; behaviour: number; onFailure: OnFailure }>) =>
  session(
    set.map(({ behaviour, name, onFailure }) =>
      FakeExtension.make(name, (req) => Effect.succeed(behaviourOf(behaviour)(req)), { on_failure: onFailure })
    ),
    true
  )

const extensionSet = fc.uniqueArray(
  fc.record({
    name: fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/),
    behaviour: fc.integer({ min: 0, max: behaviours.length - 1 }),
    onFailure: fc.constantFrom("ignore" as const, "ask" as const, "deny" as const)
  }),
  { minLength: 1, maxLength: 6, selector: (x) => x.name }
)

// ---- schedules -------------------------------------------------------------------------------------------------

type FaultKind = "hang" | "crash" | "garbage"

/** One extension of a set: what it does, when it breaks. Fixed across the schedules it is run under. */
interface Spec {
  readonly name: string
  readonly behaviour: number
  readonly onFailure: OnFailure
  /** Its timeout (startup and later), on the TestClock. Every reply that comes at all comes before it. */
  readonly timeoutMs: number
  /** Breaks on its `at`-th request (0-based), counted over the session: the same request in every schedule. */
  readonly fault: { readonly kind: FaultKind; readonly at: number } | null
}

/** How one run unfolds in time; nothing in it may change any outcome or record. */
interface Schedule {
  /** The config order. */
  readonly order: ReadonlyArray<Spec>
  /** Per extension (by name), the delays of its replies, as fractions (‰) of its timeout, cycled. */
  readonly delays: Readonly<Record<string, ReadonlyArray<number>>>
  /** How far each TestClock step moves, cycled: replies due in one step arrive together, in time order. */
  readonly steps: ReadonlyArray<number>
}

const fault = (kind: FaultKind, request: Request): Effect.Effect<unknown, FakeExtension.FakeExit> =>
  kind === "hang"
    ? Effect.never // → timed_out when its timeout passes
    : kind === "crash"
      ? Effect.fail(
          request.event === "tool_call" ? FakeExtension.FakeExit.signal("SIGKILL") : FakeExtension.FakeExit.code(3)
        )
      : Effect.succeed(request.event === "context" ? { keep: "all" } : "garbage") // → malformed

const scheduled = (spec: Spec, delays: ReadonlyArray<number>) => {
  let requests = 0
  return FakeExtension.make(
    spec.name,
    (request) => {
      const n = requests++
      const permille = delays.length === 0 ? 0 : (delays[n % delays.length] ?? 0)
      // Strictly before the timeout: a reply that comes at all is never late, whatever the schedule.
      const delay = Math.floor((permille * (spec.timeoutMs - 1)) / 1000)
      const act =
        spec.fault !== null && spec.fault.at === n
          ? fault(spec.fault.kind, request)
          : Effect.sync(() => behaviourOf(spec.behaviour)(request))
      return Effect.andThen(Effect.sleep(Duration.millis(delay)), act)
    },
    { on_failure: spec.onFailure, timeout_ms: spec.timeoutMs, startup_timeout_ms: spec.timeoutMs }
  )
}

/** Plays the session under `schedule` on a fresh TestClock, driving the clock in the schedule's steps. */
const runScheduled = (schedule: Schedule) =>
  Effect.gen(function* () {
    const fakes = schedule.order.map((spec) => scheduled(spec, schedule.delays[spec.name] ?? []))
    // The events where replies are combined and settled; the others combine the same way, and run in the smoke test.
    const fiber = yield* Effect.forkChild(session(fakes, false))
    let step = 0
    let elapsed = 0
    while (fiber.pollUnsafe() === undefined) {
      // Every timeout is at most 200 ms and a session is a few dozen exchanges: far less than this.
      if (elapsed > 600_000) return yield* Effect.die(new Error("the session did not finish on the TestClock"))
      const millis = schedule.steps[step++ % schedule.steps.length] ?? 1
      elapsed += millis
      yield* TestClock.adjust(Duration.millis(millis))
    }
    return yield* Fiber.join(fiber)
  }).pipe(Effect.provide(TestClock.layer()))

const specSet: fc.Arbitrary<ReadonlyArray<Spec>> = fc.uniqueArray(
  fc.record({
    name: fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/),
    behaviour: fc.integer({ min: 0, max: behaviours.length - 1 }),
    onFailure: fc.constantFrom("ignore" as const, "ask" as const, "deny" as const),
    timeoutMs: fc.integer({ min: 2, max: 200 }),
    fault: fc.option(
      fc.record({
        kind: fc.constantFrom("hang" as const, "crash" as const, "garbage" as const),
        at: fc.nat({ max: 12 })
      }),
      { freq: 2 }
    )
  }),
  { minLength: 1, maxLength: 5, selector: (x) => x.name }
)

const scheduleOf = (set: ReadonlyArray<Spec>): fc.Arbitrary<Schedule> =>
  fc.record({
    order: fc.shuffledSubarray([...set], { minLength: set.length }),
    delays: fc.record(
      Object.fromEntries(set.map((x) => [x.name, fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 6 })]))
    ),
    steps: fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 5 })
  })

describe("order independence (fakes)", () => {
  it("any two schedules (reply delays, clock steps, config order) with faults mixed in: identical outcomes and audit records but for timings", async () => {
    await fc.assert(
      fc.asyncProperty(
        specSet.chain((set) => fc.tuple(fc.constant(set), scheduleOf(set), scheduleOf(set))),
        async ([_set, a, b]) => {
          const [first, second] = await Effect.runPromise(Effect.all([runScheduled(a), runScheduled(b)]))
          assert.deepStrictEqual(second, first)
        }
      ),
      { numRuns: 1000 }
    )
  }, 120_000)

  it("smoke: any permutation of the config gives identical outcomes and audit records but for timings", async () => {
    await fc.assert(
      fc.asyncProperty(
        extensionSet.chain((set) => fc.tuple(fc.constant(set), fc.shuffledSubarray(set, { minLength: set.length }))),
        async ([set, shuffled]) => {
          const [a, b] = await Effect.runPromise(Effect.all([run(set), run(shuffled)]))
          assert.deepStrictEqual(b, a)
        }
      ),
      { numRuns: 100 }
    )
  })
})
