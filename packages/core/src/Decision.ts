import type { PolicyLevel } from "@abhed/protocol"
import { Order } from "effect"
import type { PolicyDecision } from "./Policy.ts"
import { type Level, LevelOrder, type Reason, ReasonOrder, type Verdict } from "./Verdict.ts"

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

// The policy's allow is the verdict's none: the bottom of the one order of levels (Verdict.ts `LevelOrder`).
export const asLevel = (level: PolicyLevel): Level => (level === "allow" ? "none" : level)
const stricter = Order.max(LevelOrder)

/** The extension name under which the policy's reason appears. */
export const PolicyReasonName = "policy"

/** The extension name under which the host's own reasons appear (input it could not send to any extension). */
export const HostReasonName = "host"

export const decide = (policy: PolicyDecision, verdict: Verdict): Decision => {
  const policyLevel = asLevel(policy.level)
  const level = stricter(policyLevel, verdict.level)
  if (level === "none") return { decision: "allow", reasons: [] }
  const reasons: Array<Reason> = []
  if (policyLevel === level) reasons.push({ extension: PolicyReasonName, reason: policy.reason ?? policy.source })
  if (verdict.level === level) {
    reasons.push(...[...verdict.reasons].sort(ReasonOrder))
  }
  return { decision: level, reasons }
}
