import type { PolicyLevel } from "@abhed/protocol"
import { describe, expect, it } from "vitest"
import { decide } from "../src/Decision.ts"
import type { PolicyDecision } from "../src/Policy.ts"
import { ask, deny, join, none, type Verdict } from "../src/Verdict.ts"

const policyAt = (level: PolicyLevel, reason?: string): PolicyDecision => ({ level, source: "rule:x[0]", reason })

describe("decide", () => {
  const verdicts: ReadonlyArray<[Verdict, string]> = [
    [none, "allow"],
    [ask("e", "r"), "ask"],
    [deny("e", "r"), "deny"]
  ]
  const table: ReadonlyArray<[PolicyLevel, number, string]> = [
    ["allow", 0, "allow"],
    ["allow", 1, "ask"],
    ["allow", 2, "deny"],
    ["ask", 0, "ask"],
    ["ask", 1, "ask"],
    ["ask", 2, "deny"],
    ["deny", 0, "deny"],
    ["deny", 1, "deny"],
    ["deny", 2, "deny"]
  ]
  it.each(table)("policy %s × verdict #%i → %s", (p, v, expected) => {
    const [verdict] = verdicts[v] ?? [none]
    expect(decide(policyAt(p), verdict).decision).toBe(expected)
  })

  it("allow has no reasons", () => {
    expect(decide(policyAt("allow", "fine"), none)).toEqual({ decision: "allow", reasons: [] })
  })
  it("reasons of the winning level only: policy first, then extensions by name", () => {
    const verdict = join(deny("zed", "z"), deny("abe", "a"))
    expect(decide(policyAt("deny", "operator says no"), verdict).reasons).toEqual([
      { extension: "policy", reason: "operator says no" },
      { extension: "abe", reason: "a" },
      { extension: "zed", reason: "z" }
    ])
    expect(decide(policyAt("ask", "check"), verdict).reasons).toEqual([
      { extension: "abe", reason: "a" },
      { extension: "zed", reason: "z" }
    ])
    expect(decide(policyAt("deny", "no"), ask("e", "r")).reasons).toEqual([{ extension: "policy", reason: "no" }])
  })
  it("a policy without a reason is named by its source", () => {
    expect(decide({ level: "ask", source: "hook:audit", reason: undefined }, none).reasons).toEqual([
      { extension: "policy", reason: "hook:audit" }
    ])
  })
})
