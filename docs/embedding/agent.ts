/**
 * Embedding the extension host in an Effect-based agent. This file is type-checked by `pnpm test` and exercised
 * by test/host/embedding.test.ts, so docs/embedding.md (which quotes it) stays true.
 */
import { Approval, AuditLog, ExtensionHost, FakeExtension } from "@abhed/host"
import { type JsonObject, parseConfig } from "@abhed/protocol"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Layer, Schema } from "effect"

// --- 1. The agent's tool step: ask the host before running a tool, and again before the model sees the output.

export class ToolDenied extends Schema.TaggedError<ToolDenied>()("ToolDenied", { reasons: Schema.String }) {}

export const runTool = (
  tool: string,
  args: JsonObject,
  execute: (args: JsonObject) => Effect.Effect<string>
) =>
  Effect.gen(function*() {
    const host = yield* ExtensionHost
    // allow runs, deny does not, ask is the Approver's call (a prompt, or `Approver.layerDeny` when unattended),
    // judged again by the set in force if the config was reloaded while the Approver was asked
    const { run, outcome: call, call_id } = yield* Approval.decide({ tool, args })
    const reasons = call.reasons.map((r) => `${r.extension}: ${r.reason}`).join("; ")
    if (!run) return yield* new ToolDenied({ reasons })
    // Run with the SETTLED args: the ones every extension saw in the last round.
    const output = yield* execute(call.args)
    // The call's id (decide names a call given without one): ties the result to its call in the audit.
    return yield* host.toolResult({ tool, args: call.args, content: output, is_error: false, call_id })
  })

// --- 2. The live layer: real extension processes from an abhed.json.

export const liveHost = (configText: string, configDir: string, auditFile: string, sessionId: string) =>
  Layer.unwrap(
    Effect.gen(function*() {
      // A bad config fails the layer with a ConfigError that lists every problem with its path.
      const config = yield* Effect.fromResult(parseConfig(configText))
      return ExtensionHost.layer(config, { sessionId, baseDir: configDir })
    })
  ).pipe(
    Layer.provideMerge(AuditLog.layerJsonl(auditFile)),
    Layer.provide(NodeServices.layer) // the platform's file system (the JSONL audit log)
  )

// --- 3. In tests: in-process fakes run every host rule with no processes (timeouts on the TestClock).

export const fakeHost = ExtensionHost.layerFake(
  [
    FakeExtension.fromReplies("guard", {
      tool_call: (req) => (String(req.args["path"] ?? "").includes("secret") ? { block: true, reason: "no secrets" } : {})
    }),
    FakeExtension.fromReplies("redactor", {
      tool_result: (req) => ({ content: req.content.replaceAll(/AKIA[A-Z0-9]{16}/g, "[redacted]") })
    })
  ],
  { sessionId: "test" }
).pipe(Layer.provideMerge(AuditLog.layerMemory))

// --- 4. Or a plain mock of the service, when the agent test does not care about extensions at all.

export const allowEverything = ExtensionHost.layerMock({
  toolCall: (call) => Effect.succeed({ decision: "allow", reasons: [], args: call.args, rounds: 1 }),
  toolResult: (result) => Effect.succeed({ content: result.content, is_error: result.is_error, rounds: 1 })
})
