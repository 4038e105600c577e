import {
  type BeforeAgentStartReply,
  type BeforeCompactReply,
  type ContextReply,
  decodeReply,
  type JsonObject,
  jsonEquals,
  type ListToolsReply,
  type PolicyLevel,
  type ToolCallReply,
  type ToolResultReply
} from "@abhed/protocol"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { combineCompact } from "../src/Compaction.ts"
import { combineKeep } from "../src/ContextKeep.ts"
import { decide } from "../src/Decision.ts"
import { combineIsError } from "../src/IsError.ts"
import type { Named } from "../src/Named.ts"
import { type RoundReply, settle } from "../src/Settling.ts"
import { combineSystem } from "../src/SystemPrompt.ts"
import { combineTools } from "../src/ToolRegistry.ts"
import { ask, deny, fromToolCallReply, join, type Level, none, type Verdict, VerdictReducer } from "../src/Verdict.ts"

const runs = { numRuns: 1000 } as const

// ---------- generators ----------

const extName = fc.string({ minLength: 1, maxLength: 3, unit: fc.constantFrom("a", "b", "B", "c", "é", "1") })
const reasonText = fc.constantFrom("", "r1", "r2", "r3")

/** Verdicts as the code builds them: joins of constructor results (the normal form `join` maintains). */
const atom: fc.Arbitrary<Verdict> = fc.oneof(
  fc.constant(none),
  fc.tuple(extName, reasonText).map(([e, r]) => ask(e, r)),
  fc.tuple(extName, reasonText).map(([e, r]) => deny(e, r))
)
const verdict: fc.Arbitrary<Verdict> = fc.array(atom, { maxLength: 4 }).map((vs) => vs.reduce(join, none))

/** A set of (unique name, reply) pairs, together with a permutation of it. */
const namedSet = <A>(reply: fc.Arbitrary<A>, maxLength = 6) =>
  fc
    .uniqueArray(fc.record({ name: extName, value: reply }), { selector: (r) => r.name, maxLength })
    .chain((xs) => fc.tuple(fc.constant(xs), fc.shuffledSubarray(xs, { minLength: xs.length, maxLength: xs.length })))

const toolCallReply: fc.Arbitrary<ToolCallReply> = fc.record(
  { block: fc.boolean(), ask: fc.boolean(), reason: reasonText, args: fc.constant({ x: 1 }) },
  { requiredKeys: [] }
)
const toolResultReply: fc.Arbitrary<ToolResultReply> = fc.record(
  { content: fc.string({ maxLength: 3 }), is_error: fc.boolean() },
  { requiredKeys: [] }
)
const contextReply: fc.Arbitrary<ContextReply> = fc.record(
  {
    keep: fc.array(
      fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: -3, max: 12 }) },
        fc.constantFrom(0.5, 2.5, -0.5, Number.MAX_SAFE_INTEGER + 2, "1", null, true, [1], { i: 1 })
      ),
      { maxLength: 12 }
    )
  },
  { requiredKeys: [] }
)
const systemReply: fc.Arbitrary<BeforeAgentStartReply> = fc.record(
  { system: fc.string({ maxLength: 3 }) },
  { requiredKeys: [] }
)
const compactReply: fc.Arbitrary<BeforeCompactReply> = fc.record(
  { cancel: fc.boolean(), summary: fc.string({ maxLength: 3 }) },
  { requiredKeys: [] }
)
const toolsReply: fc.Arbitrary<ListToolsReply> = fc.record(
  {
    tools: fc.array(
      fc.record({
        name: fc.constantFrom("bash", "grep", "fetch", "x", "BASH", "Grep", "bash\u200b", "b\u0430sh", "bash ", ""),
        description: fc.string({ maxLength: 2 }),
        input_schema: fc.constant({})
      }),
      { maxLength: 3 }
    )
  },
  { requiredKeys: [] }
)

const verdictOf = (replies: ReadonlyArray<Named<ToolCallReply>>): Verdict =>
  VerdictReducer.combineAll(replies.map((r) => fromToolCallReply(r.name, r.value)))

// ---------- 1. lattice laws ----------

describe("Verdict join is a commutative, idempotent monoid", () => {
  it("associative", () => {
    fc.assert(
      fc.property(verdict, verdict, verdict, (a, b, c) => {
        expect(join(join(a, b), c)).toEqual(join(a, join(b, c)))
      }),
      runs
    )
  })
  it("commutative", () => {
    fc.assert(
      fc.property(verdict, verdict, (a, b) => {
        expect(join(a, b)).toEqual(join(b, a))
      }),
      runs
    )
  })
  it("idempotent", () => {
    fc.assert(
      fc.property(verdict, (a) => {
        expect(join(a, a)).toEqual(a)
      }),
      runs
    )
  })
  it("none is the identity", () => {
    fc.assert(
      fc.property(verdict, (a) => {
        expect(join(none, a)).toEqual(a)
        expect(join(a, none)).toEqual(a)
      }),
      runs
    )
  })
})

// ---------- 2. order independence ----------

describe("load order never changes an outcome", () => {
  it("tool_call verdict", () => {
    fc.assert(
      fc.property(namedSet(toolCallReply), ([xs, ys]) => {
        expect(verdictOf(ys)).toEqual(verdictOf(xs))
      }),
      runs
    )
  })
  it("tool_result is_error", () => {
    fc.assert(
      fc.property(fc.boolean(), namedSet(toolResultReply), (original, [xs, ys]) => {
        expect(combineIsError(original, ys)).toBe(combineIsError(original, xs))
      }),
      runs
    )
  })
  it("context keep", () => {
    fc.assert(
      fc.property(fc.nat(10), namedSet(contextReply), (n, [xs, ys]) => {
        expect(combineKeep(n, ys)).toEqual(combineKeep(n, xs))
      }),
      runs
    )
  })
  it("before_agent_start system", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3 }), namedSet(systemReply), (system, [xs, ys]) => {
        expect(combineSystem(system, ys)).toBe(combineSystem(system, xs))
      }),
      runs
    )
  })
  it("before_compact", () => {
    fc.assert(
      fc.property(namedSet(compactReply), ([xs, ys]) => {
        expect(combineCompact(ys)).toEqual(combineCompact(xs))
      }),
      runs
    )
  })
  it("list_tools", () => {
    const builtin = fc.subarray(["bash", "read"])
    fc.assert(
      fc.property(builtin, namedSet(toolsReply), (b, [xs, ys]) => {
        expect(combineTools(b, ys)).toEqual(combineTools(b, xs))
      }),
      runs
    )
  })
  it("list_tools: every accepted name is valid and unique ignoring case, and none folds to a built-in", () => {
    const builtin = fc.subarray(["bash", "read", "Fetch"])
    fc.assert(
      fc.property(builtin, namedSet(toolsReply), (b, [xs]) => {
        const { accepted, rejected } = combineTools(b, xs)
        const folded = accepted.map((a) => a.tool.name.toLowerCase())
        expect(new Set(folded).size).toBe(folded.length)
        for (const name of folded) {
          expect(name).toMatch(/^[a-z0-9_-]{1,64}$/)
          expect(b.map((x) => x.toLowerCase())).not.toContain(name)
        }
        // Nothing is lost: every declaration is accepted or rejected.
        const declared = new Set(xs.flatMap((x) => (x.value.tools ?? []).map((t) => t.name)))
        expect(new Set([...accepted.map((a) => a.tool.name), ...rejected.map((r) => r.name)])).toEqual(declared)
      }),
      runs
    )
  })
})

// ---------- 3. veto never permits ----------

const nested = (depth: number): unknown => {
  let v: unknown = { block: true }
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { args: v, allow: true } : [v]
  return v
}
const huge = "x".repeat(1 << 20)
const deep = nested(2000)
const anyJson = fc.jsonValue({ maxDepth: 3 })
const arbitraryReply: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    { allow: true },
    { block: false },
    { ask: false },
    { block: false, ask: false, allow: true, reason: "trust me" },
    { allow: true, override: true, decision: "allow" },
    {},
    huge,
    { reason: huge, block: true },
    { reason: huge, ask: true },
    { args: deep },
    deep,
    null,
    [{ block: true }]
  ),
  fc.record({ block: anyJson, ask: anyJson, reason: anyJson, args: anyJson, allow: anyJson }, { requiredKeys: [] }),
  fc.record({ block: fc.boolean(), ask: fc.boolean(), reason: fc.string(), allow: fc.boolean() }, { requiredKeys: [] }),
  anyJson
)
const levelRank: { readonly [L in PolicyLevel | Level]: number } = { none: 0, allow: 0, ask: 1, deny: 2 }
const policyLevels: ReadonlyArray<PolicyLevel> = ["allow", "ask", "deny"]

describe("veto never permits", () => {
  it("no reply, however malformed, brings the decision below the policy or a well-formed veto", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ name: extName, raw: arbitraryReply }), { selector: (r) => r.name, maxLength: 6 }),
        (raws) => {
          const replies: Array<Named<ToolCallReply>> = []
          for (const { name, raw } of raws) {
            const decoded = decodeReply("tool_call", raw)
            // A malformed reply marks the extension dead: its reply counts as no opinion.
            if (Result.isSuccess(decoded)) replies.push({ name, value: decoded.success.reply })
          }
          const v = verdictOf(replies)
          const strongest = Math.max(
            0,
            ...replies.map((r) => (r.value.block === true ? 2 : r.value.ask === true ? 1 : 0))
          )
          expect(levelRank[v.level]).toBe(strongest)
          for (const level of policyLevels) {
            const d = decide({ level, source: "default", reason: undefined }, v)
            expect(levelRank[d.decision]).toBeGreaterThanOrEqual(levelRank[level])
            expect(levelRank[d.decision]).toBeGreaterThanOrEqual(levelRank[v.level])
            expect(levelRank[d.decision]).toBe(Math.max(levelRank[level], levelRank[v.level]))
          }
        }
      ),
      runs
    )
  })
})

// ---------- 4. settling ----------

type Payload = JsonObject
type Sim =
  | { readonly kind: "guard"; readonly word: string }
  | { readonly kind: "asker"; readonly word: string }
  | { readonly kind: "redactor" }
  | { readonly kind: "appender" }
  | { readonly kind: "setX"; readonly x: number }
  | { readonly kind: "echo" }
  | { readonly kind: "silent" }

const cmdOf = (p: Payload): string => String(p["cmd"])

/** Each simulated extension is a pure function of the payload it is shown. */
const behave = (name: string, sim: Sim, p: Payload): { proposal: Payload | undefined; value: Verdict } => {
  const cmd = cmdOf(p)
  switch (sim.kind) {
    case "guard":
      return { proposal: undefined, value: cmd.includes(sim.word) ? deny(name, `no ${sim.word}`) : none }
    case "asker":
      return { proposal: undefined, value: cmd.includes(sim.word) ? ask(name, `ask ${sim.word}`) : none }
    case "redactor":
      return {
        proposal: cmd.includes("SECRET") ? { ...p, cmd: cmd.replaceAll("SECRET", "***") } : undefined,
        value: none
      }
    case "appender":
      return { proposal: cmd.endsWith(" --safe") ? undefined : { ...p, cmd: `${cmd} --safe` }, value: none }
    case "setX":
      return { proposal: p["x"] === sim.x ? undefined : { ...p, x: sim.x }, value: none }
    case "echo": {
      // The same payload with its keys in another order: equal as JSON, so not a proposal.
      const reordered: Record<string, unknown> = {}
      for (const k of Object.keys(p).reverse()) reordered[k] = p[k]
      return { proposal: reordered, value: none }
    }
    case "silent":
      return { proposal: undefined, value: none }
  }
}

const sim: fc.Arbitrary<Sim> = fc.oneof(
  fc.constantFrom("rm", "SECRET", "--safe", "***", "zzz").map((word): Sim => ({ kind: "guard", word })),
  fc.constantFrom("ls", "***", "x").map((word): Sim => ({ kind: "asker", word })),
  fc.constant<Sim>({ kind: "redactor" }),
  fc.constant<Sim>({ kind: "appender" }),
  fc.constantFrom(1, 2).map((x): Sim => ({ kind: "setX", x })),
  fc.constant<Sim>({ kind: "echo" }),
  fc.constant<Sim>({ kind: "silent" })
)
const initialPayload: fc.Arbitrary<Payload> = fc
  .tuple(fc.array(fc.constantFrom("ls", "rm", "SECRET", "-rf", "x"), { maxLength: 4 }), fc.constantFrom(0, 1, 2))
  .map(([words, x]) => ({ cmd: words.join(" "), x }))

const simulate = (subs: ReadonlyArray<Named<Sim>>, initial: Payload, maxRounds: number) => {
  const inputs = new Map<string, Array<Payload>>()
  const denials: Array<number> = [] // rounds in which some guard denied
  const outcome = settle<Payload, Verdict>({
    initial,
    reducer: VerdictReducer,
    stop: (v) => v.level === "deny",
    maxRounds,
    round: (payload, round) =>
      subs.map(({ name, value }): RoundReply<Payload, Verdict> => {
        const seen = inputs.get(name) ?? []
        seen.push(payload)
        inputs.set(name, seen)
        const r = behave(name, value, payload)
        if (r.value.level === "deny") denials.push(round)
        return { name, proposal: r.proposal, value: r.value }
      })
  })
  return { outcome, inputs, denials }
}

describe("settling", () => {
  const scenario = fc.tuple(namedSet(sim, 6), initialPayload, fc.integer({ min: 1, max: 6 }))

  it("outcome does not depend on subscriber order", () => {
    fc.assert(
      fc.property(scenario, ([[xs, ys], initial, maxRounds]) => {
        expect(simulate(ys, initial, maxRounds).outcome).toEqual(simulate(xs, initial, maxRounds).outcome)
      }),
      runs
    )
  })

  it("when Settled, every subscriber's last-round input was the final payload", () => {
    fc.assert(
      fc.property(scenario, ([[xs], initial, maxRounds]) => {
        const { outcome, inputs } = simulate(xs, initial, maxRounds)
        expect(outcome.rounds).toBeLessThanOrEqual(maxRounds)
        for (const { name } of xs) expect(inputs.get(name)?.length).toBe(outcome.rounds)
        if (outcome._tag === "Settled") {
          for (const { name } of xs) expect(jsonEquals(inputs.get(name)?.at(-1), outcome.payload)).toBe(true)
          // and nobody wanted anything else for it
          for (const { name, value } of xs) {
            const p = behave(name, value, outcome.payload).proposal
            expect(p === undefined || jsonEquals(p, outcome.payload)).toBe(true)
          }
        }
      }),
      runs
    )
  })

  it("fighting rewriters end Unsettled at maxRounds unless a deny stops them", () => {
    fc.assert(
      fc.property(scenario, ([[xs], initial, maxRounds]) => {
        const fighters = new Set(xs.flatMap((s) => (s.value.kind === "setX" ? [s.value.x] : [])))
        fc.pre(fighters.size === 2)
        const { outcome } = simulate(xs, initial, maxRounds)
        if (outcome._tag !== "Stopped") {
          expect(outcome._tag).toBe("Unsettled")
          expect(outcome.rounds).toBe(maxRounds)
        }
      }),
      runs
    )
  })

  it("a deny in any round → Stopped with deny, in that round; no deny → never Stopped", () => {
    fc.assert(
      fc.property(scenario, ([[xs], initial, maxRounds]) => {
        const { outcome, denials } = simulate(xs, initial, maxRounds)
        const first = denials[0]
        if (first === undefined) {
          expect(outcome._tag).not.toBe("Stopped")
          expect(outcome.value.level).not.toBe("deny")
        } else {
          expect(outcome._tag).toBe("Stopped")
          expect(outcome.value.level).toBe("deny")
          expect(outcome.rounds).toBe(first)
        }
      }),
      runs
    )
  })
})

// ---------- 5. is_error and keep ----------

describe("raise-only and subset rules", () => {
  it("is_error is never lowered, and raised exactly when some extension raises it", () => {
    fc.assert(
      fc.property(namedSet(toolResultReply), ([xs]) => {
        expect(combineIsError(true, xs)).toBe(true)
        expect(combineIsError(false, xs)).toBe(xs.some((r) => r.value.is_error === true))
      }),
      runs
    )
  })
  it("kept context is a subset of every extension's in-range keep, and keeps all they agree on", () => {
    fc.assert(
      fc.property(fc.nat(10), namedSet(contextReply), (n, [xs]) => {
        const { keep } = combineKeep(n, xs)
        const inRange = (i: unknown) => typeof i === "number" && Number.isInteger(i) && i >= 0 && i < n
        for (const { value } of xs) {
          if (value.keep === undefined) continue
          const allowed = new Set(value.keep.filter(inRange))
          for (const i of keep) expect(allowed.has(i)).toBe(true)
        }
        for (let i = 0; i < n; i++) {
          const everyone = xs.every((r) => r.value.keep === undefined || r.value.keep.includes(i))
          expect(keep.includes(i)).toBe(everyone)
        }
      }),
      runs
    )
  })
})
