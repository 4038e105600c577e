import type { PolicyRule } from "@abhed/protocol"
import { matchesRule, type ToolCall } from "./Policy.ts"

/**
 * Per-extension matchers (docs/design.md#combination): an extension's `match` rules, in the policy's rule shape and
 * matched by the policy's own code, decide whether it takes part in a `tool_call` or `tool_result`.
 */

/** Whether an extension with these `match` rules takes part in this call: no rules configured = every call;
 *  otherwise any rule matching (so an empty list matches nothing). */
export const takesPart = (match: ReadonlyArray<PolicyRule> | undefined, call: ToolCall): boolean => {
  if (match === undefined) return true
  for (const rule of match) if (matchesRule(rule, call)) return true
  return false
}
