import type { ExtensionHostShape, ToolOwnerUnavailable, UnknownTool } from "@abhed/host"
import { Effect } from "effect"
import type { InputRequest } from "../InputLine.ts"
import type { OutputLine } from "../Output.ts"

/**
 * One decoded input line through the host: the method its event maps to, the outcome in the docs/design.md#output
 * shape. Only `invoke_tool` can fail (no such tool, or its owner is dead); every other event always has an answer.
 */
export const dispatch = (
  host: ExtensionHostShape,
  request: InputRequest
): Effect.Effect<OutputLine, UnknownTool | ToolOwnerUnavailable> => {
  switch (request.event) {
    case "tool_call":
      return host.toolCall({ tool: request.tool, args: request.args, call_id: request.call_id }).pipe(
        Effect.map((o) => ({
          event: "tool_call",
          decision: o.decision,
          reasons: o.reasons,
          args: o.args,
          rounds: o.rounds
        }))
      )
    case "tool_result":
      return host
        .toolResult({
          tool: request.tool,
          args: request.args,
          content: request.content,
          is_error: request.is_error,
          call_id: request.call_id
        })
        .pipe(Effect.map((o) => ({ event: "tool_result", content: o.content, is_error: o.is_error })))
    case "context":
      return host
        .context(request.messages)
        .pipe(
          Effect.map((o) =>
            o.withheld.length > 0
              ? { event: "context", keep: o.keep, withheld: o.withheld }
              : { event: "context", keep: o.keep }
          )
        )
    case "before_agent_start":
      return host
        .beforeAgentStart(request.system)
        .pipe(Effect.map((o) => ({ event: "before_agent_start", system: o.system })))
    case "before_compact":
      return host
        .beforeCompact(request.messages)
        .pipe(Effect.map((o) => ({ event: "before_compact", cancel: o.cancel, summary: o.summary })))
    // The tools accepted at startup, not the extensions asked again: those are what `invoke_tool` runs, so a tool
    // an extension declares later is never printed as if it could be invoked.
    case "list_tools":
      return host.tools.pipe(Effect.map((accepted) => ({ event: "list_tools", tools: accepted.map((a) => a.tool) })))
    case "invoke_tool":
      return host
        .invokeTool({ tool: request.tool, args: request.args, call_id: request.call_id })
        .pipe(Effect.map((o) => ({ event: "invoke_tool", result: o.result, is_error: o.is_error })))
    // The host sends the real session_start at startup and session_end when the run's scope closes.
    case "session_start":
      return Effect.succeed({ event: "session_start" })
    case "session_end":
      return Effect.succeed({ event: "session_end" })
  }
}
