import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { FailedTextMax } from "@abhed/protocol"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AuditLog, ExtensionHost } from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"

/**
 * A reply that says `failed` keeps the extension's words in the audit (the exchange's `failed`), as a dead
 * extension's stderr line is kept: they may quote what it read, so they are content (docs/failures.md).
 */

const words = "could not parse line 3: AKIA-SECRET-KEY\u001b[2J"
// As the host repeats them: printable.
const shown = "could not parse line 3: AKIA-SECRET-KEY\\x1b[2J"
const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

const exchangesOf = (
  file: string,
  failed: (req: { readonly tool: string }) => string,
  options?: Parameters<typeof AuditLog.layerJsonl>[1],
  block = false
) =>
  Effect.gen(function* () {
    const guard = FakeExtension.fromReplies(
      "guard",
      { tool_call: (req) => (block ? { failed: failed(req), block: true } : { failed: failed(req) }) },
      { on_failure: "ignore" }
    )
    const decision = yield* Effect.gen(function* () {
      const h = yield* ExtensionHost
      return (yield* h.toolCall({ tool: "bash", args: {}, call_id: "c-1" })).decision
    }).pipe(
      Effect.provide(
        ExtensionHost.layerFake([guard], { sessionId: "s" }).pipe(
          Layer.provide(AuditLog.layerJsonl(file, options)),
          Layer.provide(NodeServices.layer)
        )
      )
    )
    const records = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; rounds: Array<{ exchanges: Array<unknown> }> })
    const call = records.find((r) => r.event === "tool_call")
    return { decision, exchange: call?.rounds[0]?.exchanges[0] }
  })

const file = () => join(mkdtempSync(join(tmpdir(), "abhed-audit-failed-")), "audit.jsonl")

describe("the audit of a reply that says failed", () => {
  it.effect("keeps its words as {sha256, bytes} by default: under on_failure ignore, still there to match", () =>
    Effect.gen(function* () {
      const { decision, exchange } = yield* exchangesOf(file(), () => words)
      assert.strictEqual(decision, "allow")
      assert.deepStrictEqual(exchange, {
        extension: "guard",
        status: "failed",
        latency_ms: (exchange as { latency_ms: number }).latency_ms,
        error: "failed (the extension could not answer)",
        failed: { sha256: sha(shown), bytes: Buffer.byteLength(shown) }
      })
      assert.notInclude(JSON.stringify(exchange), "AKIA")
    })
  )

  it.effect("keeps them verbatim, printable, with --audit-content full; beside the fields it ignored", () =>
    Effect.gen(function* () {
      const { exchange } = yield* exchangesOf(file(), () => words, { content: "full" }, true)
      assert.deepInclude(exchange, { status: "failed", failed: shown, ignored: ["block"] })
    })
  )

  it.effect("bounded as the host repeats them; a blank text gives no words at all", () =>
    Effect.gen(function* () {
      const long = yield* exchangesOf(file(), () => "x".repeat(FailedTextMax * 4), { content: "full" })
      assert.deepInclude(long.exchange, { failed: `${"x".repeat(FailedTextMax)}…` })
      const blank = yield* exchangesOf(file(), () => "   ", { content: "full" })
      assert.deepInclude(blank.exchange, { status: "failed", error: "failed (the extension could not answer)" })
      assert.notProperty(blank.exchange, "failed")
    })
  )
})
