import type { PolicyConfig, PolicyLevel } from "@abhed/protocol"
import { Effect } from "effect"
import { evaluateRules, type PolicyDecision, type PolicyHook, type ToolCall } from "./Policy.ts"

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

const rank: { readonly [L in PolicyLevel]: number } = { allow: 0, ask: 1, deny: 2 }

/** Stricter first; between equally strict decisions, the one whose source (then reason) sorts first. */
const before = (a: PolicyDecision, b: PolicyDecision): boolean => {
  if (rank[a.level] !== rank[b.level]) return rank[a.level] > rank[b.level]
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
): Effect.Effect<PolicyDecision> =>
  Effect.gen(function*() {
    for (const hook of hooks) {
      const decision = yield* hook.decide(call)
      if (decision !== "abstain") return { level: decision, source: `hook:${hook.name}`, reason: undefined }
    }
    return evaluateLayerRules(policies, call)
  })
