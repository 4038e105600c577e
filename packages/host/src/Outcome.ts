import type { AcceptedTool, FinalDecision, Reason, RejectedTool } from "@abhed/core"
import type { JsonObject } from "@abhed/protocol"

/** What the agent gives the host and gets back, one type per event (docs/design.md#wire-protocol, #combination). */

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
export interface ToolCallOutcome {
  readonly decision: FinalDecision
  readonly reasons: ReadonlyArray<Reason>
  /** The settled args: what every subscriber saw in the last round, and what the tool must run with. */
  readonly args: JsonObject
  readonly rounds: number
  /**
   * Whose rewrite was adopted after each round, in round order (empty: the args are the model's). Optional so a
   * plain mock can leave it out; the host always fills it in.
   */
  readonly rewrittenBy?: ReadonlyArray<string> | undefined
}

export interface ToolResultInput {
  readonly tool: string
  readonly args: JsonObject
  readonly content: string
  readonly is_error: boolean
  readonly call_id?: string | undefined
}
export interface ToolResultOutcome {
  readonly content: string
  readonly is_error: boolean
  readonly rounds: number
}

export interface ContextOutcome {
  readonly keep: ReadonlyArray<number>
  readonly messages: ReadonlyArray<unknown>
  /**
   * Why nothing is kept, when a failure withheld the whole context (docs/design.md#failures): a failed or dead filter with
   * `on_failure` "deny" or "ask", or messages the host could not send. Empty otherwise. When non-empty, `keep`
   * and `messages` are empty: the agent should stop the turn rather than send what a filter was there to hold back.
   */
  readonly withheld: ReadonlyArray<Reason>
}
export interface SystemOutcome {
  readonly system: string
}
export interface CompactOutcome {
  readonly cancel: boolean
  /** The supplied summary, or null: the agent writes its own. */
  readonly summary: string | null
}
export interface ToolsOutcome {
  readonly accepted: ReadonlyArray<AcceptedTool>
  readonly rejected: ReadonlyArray<RejectedTool>
}
export interface InvokeToolInput {
  readonly tool: string
  readonly args: JsonObject
  readonly call_id?: string | undefined
}
export interface InvokeToolOutcome {
  readonly result: unknown
  readonly is_error: boolean
}
