import type { FinalDecision, Reason } from "@abhed/core"
import type { JsonObject, ToolDeclaration } from "@abhed/protocol"

/**
 * The output lines of `abhed-ext run`: a contract that users' scripts parse (docs/design.md#output). Field names and
 * shapes must not change. `session_start` / `session_end` input lines are acknowledged with `{"event": …}` alone.
 */
export type OutputLine =
  | {
      readonly event: "tool_call"
      readonly decision: FinalDecision
      readonly reasons: ReadonlyArray<Reason>
      readonly args: JsonObject
      readonly rounds: number
    }
  | { readonly event: "tool_result"; readonly content: string; readonly is_error: boolean }
  | {
      readonly event: "context"
      readonly keep: ReadonlyArray<number>
      /** Only when a failure withheld the whole context (`keep` is then empty): who, and why. */
      readonly withheld?: ReadonlyArray<Reason>
    }
  | { readonly event: "before_agent_start"; readonly system: string }
  | { readonly event: "before_compact"; readonly cancel: boolean; readonly summary: string | null }
  | { readonly event: "list_tools"; readonly tools: ReadonlyArray<ToolDeclaration> }
  | { readonly event: "invoke_tool"; readonly result: unknown; readonly is_error: boolean }
  | { readonly event: "session_start" }
  | { readonly event: "session_end" }

/** A line that could not be decided: a malformed input line, or an `invoke_tool` the host could not route. */
export interface ErrorLine {
  readonly error: string
  /** 1-based line number in the input, blank lines included. */
  readonly line: number
}

/** The line as printed: compact JSON, no trailing newline. */
export const render = (line: OutputLine | ErrorLine): string => JSON.stringify(line)
