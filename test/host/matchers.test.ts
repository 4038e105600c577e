import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { type Config, Defaults, type ExtensionConfig } from "@abhed/protocol"
import { AuditLog, type AuditRecord, ExtensionHost } from "@abhed/host"
import { Effect, Layer, References } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fixtureConfig, fixturesDir } from "../support/extension-helpers.ts"

/**
 * Matchers over real processes (docs/design.md#combination): a `git push` guard with `match` is written only the calls that
 * match, counted by the guard itself, and sees a call another extension rewrote into a push.
 */

// Generous: python3 and node start slowly on a loaded machine; nothing here waits on a timeout.
const generous = { timeout_ms: 10_000, startup_timeout_ms: 30_000, grace_ms: 1000 }

const config = (extensions: ReadonlyArray<ExtensionConfig>): Config => ({
  extensions,
  policy: Defaults.policy,
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: []
})

const statuses = (record: AuditRecord | undefined) =>
  record?.rounds.map((r) => Object.fromEntries(r.exchanges.map((x) => [x.extension, x.status])))

describe("matchers over real processes", () => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-matchers-"))
  it.live(
    "a git push guard asks on git push, is never written an ls, and sees a call rewritten into git push --force",
    () =>
      Effect.gen(function* () {
        const countFile = NodePath.join(dir, "counts.json")
        const cfg = config([
          fixtureConfig("matcher-push-guard.mjs", {
            name: "push-guard",
            env: { COUNT_FILE: countFile },
            match: [{ tool: "bash", args: { command: "git push*" }, reason: undefined }],
            ...generous
          }),
          fixtureConfig("host-rewriter.mjs", {
            name: "deployer",
            env: { FROM: "make deploy", TO: "git push --force" },
            ...generous
          })
        ])
        const { audit, results } = yield* Effect.gen(function* () {
          const h = yield* ExtensionHost
          const ls = yield* h.toolCall({ tool: "bash", args: { command: "ls", description: "then git push" } })
          const lsResult = yield* h.toolResult({
            tool: "bash",
            args: { command: "ls" },
            content: "a\nb\n",
            is_error: false
          })
          const push = yield* h.toolCall({ tool: "bash", args: { command: "git push origin main" } })
          const deploy = yield* h.toolCall({ tool: "bash", args: { command: "make deploy" } })
          const audit = yield* AuditLog.use((a) => a.entries)
          return { audit, results: { ls, lsResult, push, deploy } }
        }).pipe(
          Effect.provide(
            ExtensionHost.layer(cfg, { sessionId: "s-1", baseDir: fixturesDir }).pipe(
              Layer.provideMerge(AuditLog.layerMemory)
            )
          )
        )
        const counts: unknown = JSON.parse(NodeFs.readFileSync(countFile, "utf8"))

        assert.deepStrictEqual(results.ls, {
          decision: "allow",
          reasons: [],
          args: { command: "ls", description: "then git push" },
          rounds: 1,
          rewrittenBy: []
        })
        assert.deepStrictEqual(results.lsResult, { content: "a\nb\n", is_error: false, rounds: 1 })
        assert.strictEqual(results.push.decision, "ask")
        assert.deepStrictEqual(results.push.reasons, [
          { extension: "push-guard", reason: "confirm: git push origin main" }
        ])
        assert.strictEqual(results.deploy.decision, "ask")
        assert.deepStrictEqual(results.deploy.args, { command: "git push --force" })
        assert.deepStrictEqual(results.deploy.reasons, [
          { extension: "push-guard", reason: "confirm: git push --force" }
        ])

        // The guard's own count: the two pushes (the second in round 2, after the rewrite), never the ls or its result.
        assert.deepStrictEqual(counts, {
          requests: { session_start: 1, list_tools: 1, tool_call: 2, session_end: 1 },
          tool_calls: [
            { command: "git push origin main", round: 1 },
            { command: "git push --force", round: 2 }
          ]
        })
        const calls = audit.filter((r) => r.event === "tool_call" || r.event === "tool_result")
        assert.deepStrictEqual(calls.map(statuses), [
          [{ "deployer": "replied", "push-guard": "not_matched" }],
          [{ "deployer": "replied", "push-guard": "not_matched" }],
          [{ "deployer": "replied", "push-guard": "replied" }],
          [
            { "deployer": "replied", "push-guard": "not_matched" },
            { "deployer": "replied", "push-guard": "replied" }
          ]
        ])
      }).pipe(
        Effect.ensuring(Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))),
        Effect.provide(NodeServices.layer),
        Effect.provideService(References.MinimumLogLevel, "Error")
      )
  )
})
