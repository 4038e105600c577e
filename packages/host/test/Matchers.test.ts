import { assert, describe, it } from "@effect/vitest"
import { takesPart } from "@abhed/core"
import { type JsonObject, jsonEquals, type PolicyLevel, type PolicyRule, type Request } from "@abhed/protocol"
import { Effect, Layer, References } from "effect"
import * as fc from "fast-check"
import { AuditLog, type AuditRecord, ExtensionHost, type HostOptions, withoutTimings } from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import * as FakeHost from "./FakeHost.ts"

/**
 * Matchers (docs/design.md#combination): an extension with `match` takes part in a tool_call or tool_result only when one of its
 * rules matches the round's tool and args; otherwise it is audited `not_matched` and written nothing. The audience
 * is recomputed on every settling round.
 */

type Fake = FakeHost.Fake

const withHost = <A, E>(
  fakes: ReadonlyArray<Fake>,
  body: (h: ExtensionHost["Service"]) => Effect.Effect<A, E, AuditLog>,
  options?: Partial<HostOptions>
) => FakeHost.withHost(fakes, body, options).pipe(Effect.provideService(References.MinimumLogLevel, "Error"))

const rule = (tool: string, args: Record<string, string> = {}): PolicyRule => ({ tool, args, reason: undefined })
const gitPush = [rule("bash", { command: "git push*" })]
const str = (u: unknown): string => (typeof u === "string" ? u : "")

/** A fake that records every request it is written. */
const recording = (name: string, seen: Array<Request>, reply: (req: Request) => unknown, overrides = {}) =>
  FakeExtension.make(
    name,
    (req) =>
      Effect.sync(() => {
        seen.push(req)
        return reply(req)
      }),
    overrides
  )

const statuses = (record: AuditRecord | undefined) =>
  record?.rounds.map((r) => r.exchanges.map((x) => [x.extension, x.status]))

const lastRecord = AuditLog.use((a) => a.entries).pipe(Effect.map((all) => all.at(-1)))

describe("matchers over fakes", () => {
  it.effect("a guard is written only the calls it matches; the others are audited not_matched", () => {
    const seen: Array<Request> = []
    const guard = recording("guard", seen, (req) => (req.event === "tool_call" ? { ask: true, reason: "push?" } : {}), {
      match: gitPush
    })
    return withHost([guard, FakeExtension.fromReplies("other", {})], (h) =>
      Effect.gen(function* () {
        const ls = yield* h.toolCall({ tool: "bash", args: { command: "ls", description: "before git push" } })
        assert.strictEqual(ls.decision, "allow")
        assert.deepStrictEqual(statuses(yield* lastRecord), [
          [
            ["guard", "not_matched"],
            ["other", "replied"]
          ]
        ])
        const push = yield* h.toolCall({ tool: "bash", args: { command: "git push origin main" } })
        assert.strictEqual(push.decision, "ask")
        assert.deepStrictEqual(push.reasons, [{ extension: "guard", reason: "push?" }])
        yield* h.toolResult({ tool: "bash", args: { command: "ls" }, content: "x", is_error: false })
        assert.deepStrictEqual(statuses(yield* lastRecord), [
          [
            ["guard", "not_matched"],
            ["other", "replied"]
          ]
        ])
        yield* h.toolResult({ tool: "bash", args: { command: "git push" }, content: "x", is_error: false })
        assert.deepStrictEqual(statuses(yield* lastRecord), [
          [
            ["guard", "replied"],
            ["other", "replied"]
          ]
        ])
        // Other events are not filtered by match.
        yield* h.beforeAgentStart("sys")
        assert.deepStrictEqual(
          seen.map((r) => [r.event, "args" in r ? r.args["command"] : undefined]),
          [
            ["session_start", undefined],
            ["list_tools", undefined],
            ["tool_call", "git push origin main"],
            ["tool_result", "git push"],
            ["before_agent_start", undefined]
          ]
        )
      })
    )
  })

  it.effect("the audience is recomputed per round: a call rewritten into git push reaches the guard in round 2", () => {
    const seen: Array<Request> = []
    const rewriter = FakeExtension.fromReplies("a-rewriter", {
      tool_call: (req) => (req.args["command"] === "ls" ? { args: { command: "git push --force" } } : {})
    })
    const guard = recording(
      "z-guard",
      seen,
      (req) => (req.event === "tool_call" ? { block: true, reason: `no ${str(req.args["command"])}` } : {}),
      { match: gitPush, events: ["tool_call"] }
    )
    return withHost([guard, rewriter], (h) =>
      Effect.gen(function* () {
        const out = yield* h.toolCall({ tool: "bash", args: { command: "ls" }, call_id: "c-1" })
        assert.strictEqual(out.decision, "deny")
        assert.deepStrictEqual(out.reasons, [{ extension: "z-guard", reason: "no git push --force" }])
        assert.deepStrictEqual(statuses(yield* lastRecord), [
          [
            ["a-rewriter", "replied"],
            ["z-guard", "not_matched"]
          ],
          [
            ["a-rewriter", "replied"],
            ["z-guard", "replied"]
          ]
        ])
        assert.deepStrictEqual(
          seen.filter((r) => r.event === "tool_call").map(({ id: _id, ...r }) => r),
          [
            {
              event: "tool_call",
              session_id: "s-1",
              call_id: "c-1",
              tool: "bash",
              args: { command: "git push --force" },
              round: 2
            }
          ]
        )
      })
    )
  })

  it.effect("a rewrite away from a matcher's calls: the matcher is not written the final round", () => {
    const seen: Array<Request> = []
    const rewriter = FakeExtension.fromReplies("a-rewriter", {
      tool_call: (req) => (req.args["command"] === "git push" ? { args: { command: "git status" } } : {})
    })
    const guard = recording("z-guard", seen, () => ({}), { match: gitPush })
    return withHost([guard, rewriter], (h) =>
      Effect.gen(function* () {
        const out = yield* h.toolCall({ tool: "bash", args: { command: "git push" } })
        assert.deepStrictEqual(out, {
          decision: "allow",
          reasons: [],
          args: { command: "git status" },
          rounds: 2,
          rewrittenBy: ["a-rewriter"]
        })
        assert.deepStrictEqual(statuses(yield* lastRecord), [
          [
            ["a-rewriter", "replied"],
            ["z-guard", "replied"]
          ],
          [
            ["a-rewriter", "replied"],
            ["z-guard", "not_matched"]
          ]
        ])
      })
    )
  })

  it.effect("on_failure of a dead extension applies only to the calls it matches", () => {
    // Dies at startup (its process "exits" on session_start): never live, so every call finds it dead.
    const dead = FakeExtension.make("guard", () => Effect.fail(FakeExtension.FakeExit.code(1)), {
      match: gitPush,
      on_failure: "deny"
    })
    const deadRedactor = FakeExtension.make("redactor", () => Effect.fail(FakeExtension.FakeExit.code(1)), {
      match: [rule("read")],
      on_failure: "deny"
    })
    return withHost([dead, deadRedactor], (h) =>
      Effect.gen(function* () {
        const ls = yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.strictEqual(ls.decision, "allow")
        const push = yield* h.toolCall({ tool: "bash", args: { command: "git push" } })
        assert.strictEqual(push.decision, "deny")
        assert.match(push.reasons[0]?.reason ?? "", /^extension guard unavailable: /)
        const bashResult = yield* h.toolResult({
          tool: "bash",
          args: { command: "ls" },
          content: "ok",
          is_error: false
        })
        assert.deepStrictEqual(bashResult, { content: "ok", is_error: false, rounds: 1 })
        const readResult = yield* h.toolResult({ tool: "read", args: { path: "x" }, content: "ok", is_error: false })
        assert.match(readResult.content, /^\[withheld: extension redactor unavailable/)
      })
    )
  })

  it.effect("an empty match list takes part in no call, but still gets the other events", () => {
    const seen: Array<Request> = []
    return withHost([recording("never", seen, () => ({}), { match: [] })], (h) =>
      Effect.gen(function* () {
        yield* h.toolCall({ tool: "bash", args: { command: "ls" } })
        yield* h.context(["a"])
        assert.deepStrictEqual(
          seen.map((r) => r.event),
          ["session_start", "list_tools", "context"]
        )
      })
    )
  })

  it.effect("invoke_tool still goes to the owner, whatever its match says", () => {
    const owner = FakeExtension.fromReplies(
      "owner",
      {
        list_tools: () => ({ tools: [{ name: "count", description: "", input_schema: {} }] }),
        invoke_tool: () => ({ result: 3 })
      },
      { match: [] }
    )
    return withHost([owner], (h) =>
      Effect.gen(function* () {
        const out = yield* h.invokeTool({ tool: "count", args: {} })
        assert.deepStrictEqual(out, { result: 3, is_error: false })
      })
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Properties with random matchers and random rewrite chains (≥ 1000 runs each)

const commands = ["ls", "git push", "git push --force", "rm -rf /", "echo hi"] as const
const matchers: ReadonlyArray<ReadonlyArray<PolicyRule> | undefined> = [
  undefined,
  [],
  gitPush,
  [rule("bash", { command: "rm *" })],
  [rule("*")],
  [rule("read")],
  [rule("bash", { command: "ls" }), rule("bash", { command: "echo*" })],
  [rule("b?sh", { command: "*push*" })]
]

type Behaviour =
  | { readonly kind: "rewrite"; readonly from: string; readonly to: string }
  | { readonly kind: "guard"; readonly word: string }
  | { readonly kind: "asker"; readonly word: string }
  | { readonly kind: "broken" } // malformed on every tool_call: dies on the first one it is written
  | { readonly kind: "silent" }

const word = fc.constantFrom("push", "force", "rm", "ls", "echo")
// Rewriters and guards weigh most: the interesting runs are chains that move a call into or out of a guard's rules.
const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("rewrite" as const),
      from: fc.constantFrom(...commands),
      to: fc.constantFrom(...commands)
    }),
    weight: 4
  },
  { arbitrary: fc.record({ kind: fc.constant("guard" as const), word }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant("asker" as const), word }), weight: 1 },
  { arbitrary: fc.constant({ kind: "broken" as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: "silent" as const }), weight: 1 }
)

interface Spec {
  readonly name: string
  readonly behaviour: Behaviour
  readonly match: number
  readonly onFailure: "ignore" | "ask" | "deny"
}

const specs = fc.uniqueArray(
  fc.record({
    name: fc.stringMatching(/^[a-h]$/),
    behaviour,
    match: fc.integer({ min: 0, max: matchers.length - 1 }),
    onFailure: fc.constantFrom("ignore" as const, "ask" as const, "deny" as const)
  }),
  { minLength: 1, maxLength: 6, selector: (x) => x.name }
)

const commandOf = (args: JsonObject): string => str(args["command"])

const reply = (b: Behaviour, req: Request): unknown => {
  if (req.event !== "tool_call") return {}
  const command = commandOf(req.args)
  switch (b.kind) {
    case "rewrite":
      return command === b.from ? { args: { ...req.args, command: b.to } } : {}
    case "guard":
      return command.includes(b.word) ? { block: true, reason: `no ${b.word}` } : {}
    case "asker":
      return command.includes(b.word) ? { ask: true, reason: `ask ${b.word}` } : {}
    case "broken":
      return { block: "yes" }
    case "silent":
      return {}
  }
}

/** Always present, matches everything and says nothing: what it is written is each round's args. */
const observer = "observer"

interface Seen {
  readonly name: string
  readonly round: number
  readonly args: JsonObject
}

/** Runs one tool_call (and a tool_result) through a host over the specs; returns outcomes, audit and what each saw. */
const run = (set: ReadonlyArray<Spec>, tool: string, command: string, policyDefault: PolicyLevel) => {
  const seen: Array<Seen> = []
  const all: ReadonlyArray<Spec> = [
    ...set,
    { name: observer, behaviour: { kind: "silent" }, match: 0, onFailure: "ignore" }
  ]
  const fakes = all.map((spec) =>
    FakeExtension.make(
      spec.name,
      (req) =>
        Effect.sync(() => {
          if (req.event === "tool_call") seen.push({ name: spec.name, round: req.round ?? 1, args: req.args })
          return reply(spec.behaviour, req)
        }),
      { on_failure: spec.onFailure, match: matchers[spec.match] }
    )
  )
  return Effect.gen(function* () {
    const h = yield* ExtensionHost
    const call = yield* h.toolCall({ tool, args: { command }, call_id: "c-1" })
    const result = yield* h.toolResult({ tool, args: { command }, content: "out", is_error: false, call_id: "c-1" })
    const audit = (yield* AuditLog.use((a) => a.entries)).map(withoutTimings)
    return { call, result, audit, seen }
  }).pipe(
    Effect.provide(
      ExtensionHost.layerFake(fakes, {
        sessionId: "s",
        maxRewriteRounds: 4,
        policy: { deny: [], ask: [], allow: [], default: policyDefault }
      }).pipe(Layer.provideMerge(AuditLog.layerMemory))
    ),
    Effect.provideService(References.MinimumLogLevel, "None")
  )
}

const scenario = fc.record({
  set: specs,
  tool: fc.constantFrom("bash", "read"),
  command: fc.constantFrom(...commands),
  policy: fc.constantFrom<PolicyLevel>("allow", "ask", "deny")
})

const rank: Record<string, number> = { allow: 0, ask: 1, deny: 2 }

/**
 * The three properties draw the same scenarios (one seed for the file: fast-check draws each run's value from the
 * seed and the run's index, and the first property's shuffle is drawn after its scenario), and `run` over fakes gives
 * the same result for the same inputs: each scenario's host runs once, and every property reads its result. The
 * shuffled config is always run afresh (it may be the same order: its run must still be a run of its own).
 */
const seed = Date.now() ^ Math.trunc(Math.random() * 0x100000000)
const runs = new Map<string, Promise<Effect.Success<ReturnType<typeof run>>>>()
const runShared = (set: ReadonlyArray<Spec>, tool: string, command: string, policy: PolicyLevel) => {
  const key = JSON.stringify([set, tool, command, policy])
  let result = runs.get(key)
  if (result === undefined) {
    result = Effect.runPromise(run(set, tool, command, policy))
    runs.set(key, result)
  }
  return result
}

describe("matcher properties (fakes)", () => {
  it("order independence: any permutation of the config gives identical outcomes and audit records", async () => {
    await fc.assert(
      fc.asyncProperty(
        scenario.chain((s) => fc.tuple(fc.constant(s), fc.shuffledSubarray(s.set, { minLength: s.set.length }))),
        async ([s, shuffled]) => {
          const a = await runShared(s.set, s.tool, s.command, s.policy)
          const b = await Effect.runPromise(run(shuffled, s.tool, s.command, s.policy))
          assert.deepStrictEqual(b.call, a.call)
          assert.deepStrictEqual(b.result, a.result)
          assert.deepStrictEqual(b.audit, a.audit)
        }
      ),
      { numRuns: 1000, seed }
    )
  })

  it("veto never permits, and no matcher hides the final args from a guard or a failing extension that matches them", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { call } = await runShared(s.set, s.tool, s.command, s.policy)
        // Never below the policy.
        assert.isAtLeast(rank[call.decision] ?? -1, rank[s.policy] ?? 3)
        const final = { tool: s.tool, args: call.args }
        for (const spec of s.set) {
          if (!takesPart(matchers[spec.match], final)) continue
          const b = spec.behaviour
          // A guard that matches what would run and objects to it: the call is denied.
          if (b.kind === "guard" && commandOf(call.args).includes(b.word)) assert.strictEqual(call.decision, "deny")
          if (b.kind === "asker" && commandOf(call.args).includes(b.word)) assert.notStrictEqual(call.decision, "allow")
          // A broken extension that matches what would run fails on it (or already had): its on_failure counts.
          if (b.kind === "broken" && spec.onFailure === "deny") assert.strictEqual(call.decision, "deny")
          if (b.kind === "broken" && spec.onFailure === "ask") assert.notStrictEqual(call.decision, "allow")
        }
      }),
      { numRuns: 1000, seed }
    )
  })

  it("random rewrite chains: every live extension whose rules match the final args saw them in the last round; each round goes to exactly those it matches", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { audit, call, seen } = await runShared(s.set, s.tool, s.command, s.policy)
        const record = audit.find((r) => r.event === "tool_call")
        const rounds = record?.rounds ?? []
        assert.strictEqual(rounds.length, call.rounds)
        // The observer (no match, silent) is written every round: what it saw is each round's args.
        const roundArgs = seen.filter((x) => x.name === observer)
        assert.deepStrictEqual(
          roundArgs.map((x) => x.round),
          rounds.map((r) => r.round)
        )
        for (const spec of s.set) {
          const match = matchers[spec.match]
          const writes = seen.filter((x) => x.name === spec.name)
          for (const r of rounds) {
            const args = roundArgs.find((x) => x.round === r.round)?.args ?? {}
            const matches = takesPart(match, { tool: s.tool, args })
            const status = r.exchanges.find((e) => e.extension === spec.name)?.status
            const written = writes.find((w) => w.round === r.round)
            // not_matched exactly when its rules miss this round's args; then it is written nothing.
            assert.strictEqual(status === "not_matched", !matches)
            if (!matches) assert.isUndefined(written)
            // A live one that matches is written this round's args (a broken one dies on its first write).
            if (matches && spec.behaviour.kind !== "broken") {
              assert.strictEqual(status, "replied")
              assert.isTrue(jsonEquals(written?.args, args))
            }
          }
          // The property the rewrite rule is there for: if the call settled, every live extension whose rules
          // match the args that run saw exactly those args in the last round.
          const settled = record?.notes.includes("settling: Settled") === true
          if (settled && takesPart(match, { tool: s.tool, args: call.args }) && spec.behaviour.kind !== "broken") {
            const lastSeen = writes.at(-1)
            assert.strictEqual(lastSeen?.round, call.rounds)
            assert.isTrue(jsonEquals(lastSeen?.args, call.args))
          }
        }
      }),
      { numRuns: 1000, seed }
    )
  })
})
