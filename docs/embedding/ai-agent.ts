/**
 * An effect/ai agent guarded by the extension host. Type-checked by `pnpm test` and run by
 * test/embedding-ai.test.ts (a scripted model over the real example extensions), so docs/embedding.md stays true.
 */
import { GuardedToolkit, PromptHooks } from "@abhed/ai"
import { AuditLog, ExtensionHost } from "@abhed/host"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Layer, Schema } from "effect"
import { LanguageModel, Prompt, Tool, Toolkit } from "effect/ai"

// The agent's own tools, as effect/ai Tools. A bash command line is capped at 64 characters.
export const Read = Tool.make("read", { parameters: Schema.Struct({ path: Schema.String }), success: Schema.String })
export const Bash = Tool.make("bash", {
  parameters: Schema.Struct({ command: Schema.String.check(Schema.isMaxLength(64)) }),
  success: Schema.String
})
export const AgentTools = Toolkit.make(Read, Bash)

// One conversation: model calls until the model stops calling tools (at most `maxTurns`).
export const agent = (task: string, maxTurns = 8) =>
  Effect.gen(function*() {
    // Every call of our tools and of the extensions' tools goes through tool_call, then tool_result.
    const toolkit = yield* GuardedToolkit.withExtensionTools(AgentTools)
    // before_agent_start: extensions append to the system prompt.
    const start = Prompt.make([{ role: "system", content: "You are careful." }, { role: "user", content: task }])
    let history = yield* PromptHooks.applySystem(start)
    for (let turn = 0; turn < maxTurns; turn++) {
      // context: only the messages every extension keeps go to the model.
      const prompt = yield* PromptHooks.applyContext(history)
      const response = yield* LanguageModel.generateText({ prompt, toolkit })
      // An extension's ask is a tool-approval-request; the host's Approver answers it, and the next call runs it.
      const approvals = yield* GuardedToolkit.resolveApprovals(toolkit, response.content)
      history = Prompt.concat(Prompt.concat(history, Prompt.fromResponseParts(response.content)), approvals)
      if (response.finishReason !== "tool-calls" && approvals.content.length === 0) break
    }
    return history
  })

// The real host: one process per extension of the abhed.json; no extension may declare a tool named like ours.
export const host = (configFile: string, auditFile: string) =>
  ExtensionHost.layerFromFile(configFile, { sessionId: "s-1", builtinTools: Object.keys(AgentTools.tools) }).pipe(
    Layer.provideMerge(AuditLog.layerJsonl(auditFile)),
    Layer.provide(NodeServices.layer)
  )
