import type { PolicyLevel } from "@abhed/protocol"
import type { PolicyDecision } from "./Policy.ts"
import { type Level, type Reason, ReasonOrder, type Verdict } from "./Verdict.ts"

/**
 * The final decision on a tool call (docs/design.md#combination): join(policy decision, extensions' verdict) on
 * allow < ask < deny, where the verdict's "none" is the bottom (allow). So no extension can lower a policy
 * deny or ask, and any extension deny stands.
 */
export type FinalDecision = "allow" | "ask" | "deny"

export interface Decision {
  readonly decision: FinalDecision
  /** The reasons of the winning level: the policy's first (as extension "policy"), then extensions' by name. */
  readonly reasons: ReadonlyArray<Reason>
}

const rank: { readonly [L in PolicyLevel | Level]: number } = { none: 0, allow: 0, ask: 1, deny: 2 }
const decisions: ReadonlyArray<FinalDecision> = ["allow", "ask", "deny"]

/** The extension name under which the policy's reason appears. */
export const PolicyReasonName = "policy"

/** The extension name under which the host's own reasons appear (input it could not send to any extension). */
export const HostReasonName = "host"

export const decide = (policy: PolicyDecision, verdict: Verdict): Decision => {
  const level = Math.max(rank[policy.level], rank[verdict.level])
  const decision = decisions[level] ?? "deny" // level is 0..2 by construction; fail closed regardless
  if (decision === "allow") return { decision, reasons: [] }
  const reasons: Array<Reason> = []
  if (rank[policy.level] === level) reasons.push({ extension: PolicyReasonName, reason: policy.reason ?? policy.source })
  if (rank[verdict.level] === level) {
    reasons.push(...[...verdict.reasons].sort(ReasonOrder))
  }
  return { decision, reasons }
}
