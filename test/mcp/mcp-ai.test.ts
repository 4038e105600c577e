import { Agent, ScriptedModel } from "@abhed/ai"
import { Approval, AuditLog, ExtensionHost } from "@abhed/host"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, References, Schema } from "effect"
import { LanguageModel, Tool, Toolkit } from "effect/ai"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { adapterExtension, filesystemServer, guardExtension, writeConfig } from "../support/mcp-helpers.ts"

/**
 * An MCP server's tools in an effect/ai agent (`@abhed/ai`): the model calls mcp__fs__read_text_file and gets the
 * file, and mcp__fs__write_file, which a guard matching that name denies before the server is ever called.
 */

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-mcp-ai-")))
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "the notes\n")
const config = writeConfig({
  extensions: [adapterExtension("fs", [filesystemServer, root]), guardExtension("^mcp__fs__write_file$")]
})
const auditFile = NodePath.join(
  NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-mcp-ai-audit-")),
  "audit.jsonl"
)

// The agent's own tool, so that its toolkit is not empty; the model never calls it.
const Noop = Tool.make("noop", { parameters: Schema.Struct({}), success: Schema.String })
const AgentTools = Toolkit.make(Noop)
const handlers = AgentTools.toLayer({ noop: () => Effect.succeed("") })

const script: ReadonlyArray<ScriptedModel.Turn> = [
  () => [
    ScriptedModel.toolCall("c-read", "mcp__fs__read_text_file", { path: NodePath.join(root, "notes.txt") }),
    ScriptedModel.toolCall("c-write", "mcp__fs__write_file", { path: NodePath.join(root, "new.txt"), content: "hi" }),
    ScriptedModel.finish("tool-calls")
  ],
  () => [ScriptedModel.text("done"), ScriptedModel.finish("stop")]
]

describe("abhed-ext mcp in an effect/ai agent", () => {
  it.live(
    "the model reads through an MCP tool; the guard denies the write, which never reaches the server",
    () =>
      Effect.gen(function* () {
        const model = yield* ScriptedModel.make(script)
        const done = yield* Agent.run({ toolkit: AgentTools, prompt: "read the notes, then write" }).pipe(
          Effect.provideService(LanguageModel.LanguageModel, model)
        )
        const results = ScriptedModel.toolResults(model.prompts[1])
        const read = results.get("c-read")
        assert.isFalse(read?.isFailure)
        assert.include(JSON.stringify(read?.result), "the notes")
        const write = results.get("c-write")
        assert.isTrue(write?.isFailure)
        assert.include(JSON.stringify(write?.result), "mcp__fs__write_file is not allowed")
        assert.isFalse(NodeFs.existsSync(NodePath.join(root, "new.txt")))
        const audit: ReadonlyArray<{ event: string; call_id?: string }> = NodeFs.readFileSync(auditFile, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line))
        const events = (id: string) => audit.filter((r) => r.call_id === id).map((r) => r.event)
        assert.deepStrictEqual(events("c-read"), ["tool_call", "invoke_tool", "tool_result"])
        assert.deepStrictEqual(events("c-write"), ["tool_call"])
        assert.strictEqual(done.text, "done")
      }).pipe(
        Effect.provide(handlers),
        Effect.provide(
          ExtensionHost.layerFromFile(config, { sessionId: "s-mcp", builtinTools: Object.keys(AgentTools.tools) }).pipe(
            Layer.provideMerge(AuditLog.layerJsonl(auditFile)),
            Layer.provide(NodeServices.layer)
          )
        ),
        Effect.provide(Approval.Approver.layerDeny),
        Effect.provideService(References.MinimumLogLevel, "Error")
      ),
    180_000
  )
})
