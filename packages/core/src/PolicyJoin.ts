import type { PolicyConfig } from "@abhed/protocol"
import type { Effect } from "effect"
import { asLevel } from "./Decision.ts"
import { evaluateRules, hooksThen, type PolicyDecision, type PolicyHook, type ToolCall } from "./Policy.ts"
import { LevelOrder } from "./Verdict.ts"

/**
 * Several policies at once (one per config layer: managed, user, project): each is evaluated on its own and the
 * decisions are joined on allow < ask < deny, so a layer can only make a call stricter, never let through what
 * another layer denies or asks about. The join is commutative and associative: the order the layers are given in
 * never changes the decision, nor which layer's rule is named for it.
 */

/** A policy and the name of where it comes from (a layer: "managed", "user", "project"). */
export interface LayerPolicy {
  readonly layer: string
  readonly policy: PolicyConfig
}

/** Stricter first (the one order of levels, Verdict.ts); between equally strict, the source (then reason) first. */
const before = (a: PolicyDecision, b: PolicyDecision): boolean => {
  const c = LevelOrder(asLevel(a.level), asLevel(b.level))
  if (c !== 0) return c > 0
  if (a.source !== b.source) return a.source < b.source
  return (a.reason ?? "") < (b.reason ?? "")
}

/** The join of two decisions: the stricter one (a tie by name, so that the join does not depend on order). */
export const joinPolicyDecisions = (a: PolicyDecision, b: PolicyDecision): PolicyDecision => (before(b, a) ? b : a)

/** Every layer's rules on the call, joined; each decision's source names its layer (`project:rule:deny[0]`). */
export const evaluateLayerRules = (policies: ReadonlyArray<LayerPolicy>, call: ToolCall): PolicyDecision => {
  let joined: PolicyDecision | undefined
  for (const { layer, policy } of policies) {
    const d = evaluateRules(policy, call)
    const named: PolicyDecision = { ...d, source: `${layer}:${d.source}` }
    joined = joined === undefined ? named : joinPolicyDecisions(joined, named)
  }
  // No policy at all: nothing restricts the call.
  return joined ?? { level: "allow", source: "default", reason: undefined }
}

/** Hooks in order, the first that does not abstain decides (as with one policy); else every layer's rules, joined. */
export const evaluateLayerPolicies = (
  policies: ReadonlyArray<LayerPolicy>,
  hooks: ReadonlyArray<PolicyHook>,
  call: ToolCall
): Effect.Effect<PolicyDecision> => hooksThen(hooks, call, () => evaluateLayerRules(policies, call))
