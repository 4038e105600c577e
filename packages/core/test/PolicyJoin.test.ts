import type { PolicyConfig, PolicyLevel, PolicyRule } from "@abhed/protocol"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { evaluateLayerRules, joinPolicyDecisions, type LayerPolicy } from "../src/PolicyJoin.ts"
import type { PolicyDecision } from "../src/Policy.ts"

const rule = (tool: string, reason?: string): PolicyRule => ({ tool, args: {}, reason })
const policy = (p: Partial<PolicyConfig>): PolicyConfig => ({ deny: [], ask: [], allow: [], default: "allow", ...p })
const call = (tool: string) => ({ tool, args: {} })

describe("layered policies", () => {
  it("each layer is evaluated and the stricter decision wins, naming its layer", () => {
    const layers: ReadonlyArray<LayerPolicy> = [
      { layer: "managed", policy: policy({ ask: [rule("write", "managed asks")] }) },
      { layer: "user", policy: policy({ allow: [rule("*")] }) },
      { layer: "project", policy: policy({ deny: [rule("bash", "no shell here")] }) }
    ]
    expect(evaluateLayerRules(layers, call("bash"))).toEqual({
      level: "deny",
      source: "project:rule:deny[0]",
      reason: "no shell here"
    })
    expect(evaluateLayerRules(layers, call("write"))).toEqual({
      level: "ask",
      source: "managed:rule:ask[0]",
      reason: "managed asks"
    })
    // A user's allow lowers nothing another layer decided; a layer's default counts like a rule.
    expect(
      evaluateLayerRules([...layers, { layer: "x", policy: policy({ default: "ask" }) }], call("read")).level
    ).toBe("ask")
    expect(evaluateLayerRules(layers, call("read")).level).toBe("allow")
    expect(evaluateLayerRules([], call("read")).level).toBe("allow")
  })

  const level = fc.constantFrom<PolicyLevel>("allow", "ask", "deny")
  const decision: fc.Arbitrary<PolicyDecision> = fc.record({
    level,
    source: fc.constantFrom("a:default", "b:rule:deny[0]", "c:rule:ask[1]", "a:rule:allow[0]"),
    reason: fc.option(fc.constantFrom("r1", "r2"), { nil: undefined })
  })

  it("the join is order independent: commutative, associative, idempotent", () => {
    fc.assert(
      fc.property(decision, decision, decision, (a, b, c) => {
        expect(joinPolicyDecisions(a, b)).toEqual(joinPolicyDecisions(b, a))
        expect(joinPolicyDecisions(joinPolicyDecisions(a, b), c)).toEqual(
          joinPolicyDecisions(a, joinPolicyDecisions(b, c))
        )
        expect(joinPolicyDecisions(a, a)).toEqual(a)
      })
    )
  })

  const layerPolicy: fc.Arbitrary<LayerPolicy> = fc.record({
    layer: fc.constantFrom("managed", "user", "project"),
    policy: fc.record({
      deny: fc.array(fc.constantFrom(rule("bash", "d"), rule("w*")), { maxLength: 2 }),
      ask: fc.array(fc.constantFrom(rule("write", "a"), rule("*")), { maxLength: 2 }),
      allow: fc.array(fc.constantFrom(rule("read"), rule("*")), { maxLength: 2 }),
      default: level
    })
  })

  it("any order of the layers gives the same decision, as strict as the strictest layer alone", () => {
    fc.assert(
      fc.property(
        fc.array(layerPolicy, { maxLength: 4 }),
        fc.constantFrom("bash", "write", "read", "x"),
        (layers, tool) => {
          const joined = evaluateLayerRules(layers, call(tool))
          expect(evaluateLayerRules([...layers].reverse(), call(tool))).toEqual(joined)
          const rank = { allow: 0, ask: 1, deny: 2 }
          for (const l of layers)
            expect(rank[joined.level]).toBeGreaterThanOrEqual(rank[evaluateLayerRules([l], call(tool)).level])
        }
      )
    )
  })
})
