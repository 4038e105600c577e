import { assert, describe, it } from "@effect/vitest"
import { Approval, AuditLog, ExtensionHost } from "@abhed/host"
import { Effect, References } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { allowEverything, fakeHost, liveHost, runTool, ToolDenied } from "../../docs/embedding/agent.ts"

/** A fresh audit file: the JSONL sink takes a regular file only (no device, FIFO or link). */
const auditFile = () => NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-embed-")), "audit.jsonl")

/** The embedding guide's example (docs/embedding/agent.ts) does what docs/embedding.md says it does. */

const cat = (args: Record<string, unknown>) =>
  Effect.succeed(`contents of ${String(args["path"])}: AKIAABCDEFGHIJKLMNOP`)

describe("docs/embedding", () => {
  it.effect("with fakes: a guarded read is denied, an allowed one is redacted", () =>
    Effect.gen(function* () {
      const denied = yield* Effect.flip(runTool("read", { path: "secret.txt" }, cat))
      assert.instanceOf(denied, ToolDenied)
      assert.strictEqual(denied.reasons, "guard: no secrets")
      const ok = yield* runTool("read", { path: "notes.txt" }, cat)
      assert.strictEqual(ok.content, "contents of notes.txt: [redacted]")
      const audit = yield* AuditLog.use((a) => a.entries)
      assert.deepStrictEqual(
        audit.map((r) => r.event),
        ["session_start", "list_tools", "tool_call", "tool_call", "tool_result"]
      )
    }).pipe(Effect.provide(fakeHost), Effect.provide(Approval.Approver.layerDeny))
  )

  it.effect("with the plain mock, the tool runs untouched", () =>
    Effect.gen(function* () {
      const ok = yield* runTool("read", { path: "secret.txt" }, cat)
      assert.strictEqual(ok.content, "contents of secret.txt: AKIAABCDEFGHIJKLMNOP")
    }).pipe(Effect.provide(allowEverything), Effect.provide(Approval.Approver.layerDeny))
  )

  it.live(
    "live: the example config's real extensions, with a JSONL audit",
    () =>
      Effect.gen(function* () {
        const dir = NodePath.join(import.meta.dirname, "..", "..", "docs", "examples")
        const audit = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-embed-")), "audit.jsonl")
        const text = NodeFs.readFileSync(NodePath.join(dir, "abhed.json"), "utf8")
        const denied = yield* Effect.flip(runTool("read", { path: "config/secrets.json" }, cat)).pipe(
          Effect.provide(liveHost(text, dir, audit, "s-embed")),
          Effect.provide(Approval.Approver.layerDeny)
        )
        assert.instanceOf(denied, ToolDenied)
        assert.include(denied.reasons, "secrets are off limits")
        const records = NodeFs.readFileSync(audit, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { event: string })
        assert.deepStrictEqual(
          records.map((r) => r.event),
          ["session_start", "list_tools", "tool_call", "session_end"]
        )
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    30_000
  )

  it.effect("an asked call runs only when the Approver says yes", () =>
    Effect.gen(function* () {
      const asked = ExtensionHost.layerMock({
        toolCall: (call) =>
          Effect.succeed({
            decision: "ask",
            reasons: [{ extension: "x", reason: "sure?" }],
            args: call.args,
            rounds: 1
          }),
        toolResult: (result) => Effect.succeed({ content: result.content, is_error: false, rounds: 1 })
      })
      const no = yield* Effect.flip(runTool("bash", { command: "git push" }, cat)).pipe(
        Effect.provide(asked),
        Effect.provide(Approval.Approver.layerDeny)
      )
      assert.strictEqual(no.reasons, "x: sure?")
      const yes = yield* runTool("bash", { command: "git push" }, cat).pipe(
        Effect.provide(asked),
        Effect.provide(Approval.Approver.layer(() => Effect.succeed(true)))
      )
      assert.isFalse(yes.is_error)
    })
  )

  it.live("live: a bad config fails the layer with every problem and its path", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.provide(
          Effect.void,
          liveHost(`{"extensions":[{"name":"a","command":""}],"max_rewrite_rounds":0}`, ".", auditFile(), "s")
        )
      )
      assert.strictEqual(error._tag, "ConfigError")
      assert.include(error.message, "extensions[0].command")
      assert.include(error.message, "max_rewrite_rounds")
    })
  )
})
