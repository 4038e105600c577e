import type {
  BeforeAgentStartRule,
  BeforeCompactRule,
  ContextRule,
  InvokeToolRule,
  ListToolsRule,
  ToolCallRule,
  ToolResultRule
} from "@abhed/core"
import type { JsonObject } from "@abhed/protocol"

/**
 * What the agent gives the host and gets back, one type per event (docs/design.md#wire-protocol, #combination).
 * The outcomes are the events' rules' (core's events/): stated there, named here.
 */

export interface ToolCallInput {
  readonly tool: string
  readonly args: JsonObject
  readonly call_id?: string | undefined
  /**
   * The agent has refused the call itself, for this reason (its args fail the tool's own check): it is sent to no
   * extension, and recorded like any tool_call (the args as given), denied with the reason from `host`.
   */
  readonly refused?: string | undefined
}
export type ToolCallOutcome = ToolCallRule.Outcome

export interface ToolResultInput {
  readonly tool: string
  readonly args: JsonObject
  readonly content: string
  readonly is_error: boolean
  readonly call_id?: string | undefined
}

export type ToolResultOutcome = ToolResultRule.Outcome
export type ContextOutcome = ContextRule.Outcome
export type SystemOutcome = BeforeAgentStartRule.Outcome
export type CompactOutcome = BeforeCompactRule.Outcome
export type ToolsOutcome = ListToolsRule.Outcome

export interface InvokeToolInput {
  readonly tool: string
  readonly args: JsonObject
  readonly call_id?: string | undefined
  /**
   * Why the caller refuses to run it (`abhed-ext run`: its call was denied): nothing goes to the owner, the dispatch
   * is recorded all the same (tool, args, the reason as its note), and answered with an error result.
   */
  readonly refused?: string | undefined
}
export type InvokeToolOutcome = InvokeToolRule.Outcome
