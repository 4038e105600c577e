import { Agent, ScriptedModel } from "@abhed/ai"
import { Approval, AuditLog, ExtensionHost } from "@abhed/host"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

// The agent's own tools, as effect/ai Tools, and their handlers. A bash command line is capped at 64 characters.
export const Read = Tool.make("read", { parameters: Schema.Struct({ path: Schema.String }), success: Schema.String })
export const Bash = Tool.make("bash", {
  parameters: Schema.Struct({ command: Schema.String.check(Schema.isMaxLength(64)) }),
  success: Schema.String
})
export const AgentTools = Toolkit.make(Read, Bash)
export const handlers = AgentTools.toLayer({
  read: ({ path }) => Effect.succeed(`${path}: aws key AKIAABCDEFGHIJKLMNOP`), // pretend to read
  bash: ({ command }) => Effect.succeed(`ran ${command}`) // pretend to run
})

// The model: your provider's layer goes here. This one plays a script, so the example runs offline.
export const model = ScriptedModel.layer([
  () => [
    ScriptedModel.toolCall("c-secret", "read", { path: "config/secrets.json" }),
    ScriptedModel.toolCall("c-notes", "read", { path: "notes.txt" }),
    ScriptedModel.toolCall("c-push", "bash", { command: "git push origin main" }),
    ScriptedModel.finish("tool-calls")
  ],
  () => [ScriptedModel.text("Done."), ScriptedModel.finish("stop")]
])

// The host: one process per extension of the abhed.json; no extension may declare a tool named like ours.
export const host = (configFile: string, auditFile: string) =>
  ExtensionHost.layerFromFile(configFile, { sessionId: "s-1", builtinTools: Object.keys(AgentTools.tools) }).pipe(
    Layer.provideMerge(AuditLog.layerJsonl(auditFile)),
    Layer.provide(NodeServices.layer)
  )

// The agent, in one call: every call of our tools and the extensions' goes through tool_call before it runs and
// through tool_result before the model reads it; an ask goes to the Approver; it returns when the model is done.
export const agent = (task: string) =>
  Agent.run({
    toolkit: AgentTools,
    prompt: [{ role: "system", content: "You are careful." }, { role: "user", content: task }]
  })

export const main = (configFile: string, auditFile: string) =>
  agent("Tidy up, then push.").pipe(
    Effect.flatMap((done) => Console.log(done.text)),
    // Nobody is at the keyboard here, so every ask is refused; `Approval.Approver.layer(prompt)` asks a person.
    Effect.provide(Layer.mergeAll(handlers, model, host(configFile, auditFile), Approval.Approver.layerDeny))
  )

// node ai-agent.ts path/to/abhed.json audit.jsonl
if (import.meta.main) NodeRuntime.runMain(main(process.argv[2] ?? "abhed.json", process.argv[3] ?? "audit.jsonl"))
