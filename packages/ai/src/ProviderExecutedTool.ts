import { Schema } from "effect"
import { Tool } from "effect/ai"

/**
 * Tools the model's provider runs itself (provider-defined tools that need no handler: web search, code execution):
 * their calls never reach the toolkit, so no extension could judge one, and their results reach the model without
 * `tool_result`. A guarded toolkit refuses to offer them rather than let them run unjudged.
 */
export class ProviderExecutedTool extends Schema.TaggedError<ProviderExecutedTool>()("ProviderExecutedTool", {
  tools: Schema.Array(Schema.String)
}) {
  override get message() {
    return (
      `${this.tools.join(", ")}: run by the model's provider itself, so no extension can judge a call or its ` +
      "result: a guarded toolkit cannot offer it; leave it out of the toolkit"
    )
  }
}

/** The names of the tools in `tools` that the provider runs itself. */
export const providerExecuted = (tools: Record<string, Tool.Any>): ReadonlyArray<string> =>
  Object.values(tools).flatMap((tool) => (Tool.isProviderDefined(tool) && !tool.requiresHandler ? [tool.name] : []))
