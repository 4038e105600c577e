import { assert, describe, it } from "@effect/vitest"
import type { Request } from "@abhed/protocol"
import { Effect, Layer, References } from "effect"
import * as fc from "fast-check"
import { AuditLog, type AuditRecord, ExtensionHost } from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"

/**
 * DESIGN §3: load order never changes any outcome, verdict, text or audit record (but for timings).
 * Extensions are drawn from a pool of behaviours that touch every event, including ones that fight, break and
 * redact; the same set under two config orders must give deep-equal outcomes and audit records.
 */

const str = (u: unknown) => (typeof u === "string" ? u : JSON.stringify(u) ?? "")

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
  (req) => (req.event === "before_compact" ? { cancel: true } : req.event === "before_agent_start" ? { system: "y" } : {}),
  (req) =>
    req.event === "list_tools"
      ? { tools: [{ name: "shared", description: "", input_schema: {} }, { name: `own`, description: "", input_schema: {} }] }
      : {},
  (req) => (req.event === "tool_call" ? { block: "yes" } : {}), // malformed: dies on the first tool_call
  () => "garbage", // malformed at once
  (req) => (req.event === "tool_call" ? { block: true, ask: true, reason: "both" } : {})
]

const run = (set: ReadonlyArray<{ name: string; behaviour: number; onFailure: "ignore" | "ask" | "deny" }>) => {
  const fakes = set.map(({ behaviour, name, onFailure }) =>
    FakeExtension.make(
      name,
      (req) => Effect.succeed((behaviours[behaviour] ?? behaviours[0] ?? (() => ({})))(req)),
      { on_failure: onFailure }
    )
  )
  return Effect.gen(function*() {
    const h = yield* ExtensionHost
    const outcomes = [
      yield* h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: "c1" }),
      yield* h.toolCall({ tool: "read", args: { path: "secret" }, call_id: "c2" }),
      yield* h.toolResult({ tool: "bash", args: {}, content: "KEY out", is_error: false, call_id: "c1" }),
      yield* h.context(["a", "b", "c"]),
      yield* h.beforeAgentStart("base"),
      yield* h.beforeCompact([]),
      yield* h.listTools,
      yield* h.tools
    ]
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
}

const withoutTimings = (r: AuditRecord) => ({
  ...r,
  duration_ms: 0,
  rounds: r.rounds.map((round) => ({
    ...round,
    exchanges: round.exchanges.map((x) => ({ ...x, latency_ms: 0 }))
  }))
})

const extensionSet = fc.uniqueArray(
  fc.record({
    name: fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/),
    behaviour: fc.integer({ min: 0, max: behaviours.length - 1 }),
    onFailure: fc.constantFrom("ignore" as const, "ask" as const, "deny" as const)
  }),
  { minLength: 1, maxLength: 6, selector: (x) => x.name }
)

describe("order independence (fakes)", () => {
  it("any permutation of the config gives identical outcomes and audit records but for timings", async () => {
    await fc.assert(
      fc.asyncProperty(
        extensionSet.chain((set) => fc.tuple(fc.constant(set), fc.shuffledSubarray(set, { minLength: set.length }))),
        async ([set, shuffled]) => {
          const [a, b] = await Effect.runPromise(Effect.all([run(set), run(shuffled)]))
          assert.deepStrictEqual(b, a)
        }
      ),
      { numRuns: 1000 }
    )
  })
})
