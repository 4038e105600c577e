import { createHash } from "node:crypto"
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AuditLog, type AuditRecord, auditView, contentDigest, ExtensionHost } from "../src/index.ts"
import * as FakeExtension from "../src/FakeExtension.ts"

const secret = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG"
const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

const record = (event: string, replies: ReadonlyArray<unknown>, outcome: unknown): AuditRecord => ({
  seq: 1,
  session_id: "s",
  time: "2026-12-01T00:00:00.000Z",
  event,
  call_id: "c-1",
  rounds: [
    {
      round: 1,
      exchanges: replies.map((reply, i) => ({ extension: `x${i}`, status: "replied" as const, latency_ms: 0, reply }))
    }
  ],
  outcome,
  notes: [],
  duration_ms: 0
})

describe("auditView", () => {
  it("content is {sha256, bytes} of its UTF-8 text; a JSON value is digested as its JSON text", () => {
    assert.deepStrictEqual(contentDigest("héllo"), { sha256: sha("héllo"), bytes: 6 })
    assert.deepStrictEqual(contentDigest({ a: [1] }), { sha256: sha(`{"a":[1]}`), bytes: 9 })
  })

  it("a dead extension's stderr line is content: digested in any event's record, verbatim with full", () => {
    const line = `ValueError: could not parse ${secret}`
    const dead: AuditRecord = {
      ...record("tool_call", [], { decision: "deny" }),
      rounds: [
        {
          round: 1,
          exchanges: [{ extension: "guard", status: "exited", latency_ms: 0, error: "exited (code 1)", stderr: line }]
        }
      ]
    }
    const digested = auditView(dead, "digest")
    assert.deepStrictEqual(digested.rounds[0]?.exchanges[0], {
      extension: "guard",
      status: "exited",
      latency_ms: 0,
      error: "exited (code 1)",
      stderr: { sha256: sha(line), bytes: Buffer.byteLength(line) }
    })
    assert.notInclude(JSON.stringify(digested), "wJalr")
    assert.strictEqual(auditView(dead, "full"), dead)
  })

  it("tool_result: every content proposal and the outcome's content are digested; is_error and the rest stay", () => {
    const r = record("tool_result", [{ content: secret, is_error: true }, {}, { is_error: false }], {
      content: "[redacted]",
      is_error: true,
      rounds: 2
    })
    const view = auditView(r, "digest")
    assert.notInclude(JSON.stringify(view), "wJalrXUtnFEMI")
    assert.deepStrictEqual(
      view.rounds[0]?.exchanges.map((x) => x.reply),
      [{ content: contentDigest(secret), is_error: true }, {}, { is_error: false }]
    )
    assert.deepStrictEqual(view.outcome, { content: contentDigest("[redacted]"), is_error: true, rounds: 2 })
    // The input record is not touched; "full" keeps it as it is.
    assert.strictEqual((r.rounds[0]?.exchanges[0]?.reply as { content: string }).content, secret)
    assert.strictEqual(auditView(r, "full"), r)
  })

  it("invoke_tool results, kept context messages and compaction summaries are digested too", () => {
    const invoke = auditView(
      record("invoke_tool", [{ result: { token: secret } }], {
        _tag: "ok",
        result: { token: secret },
        is_error: false
      }),
      "digest"
    )
    assert.notInclude(JSON.stringify(invoke), "wJalrXUtnFEMI")
    const context = auditView(
      record("context", [{ keep: [0] }], { keep: [0], messages: [secret], withheld: [] }),
      "digest"
    )
    assert.deepStrictEqual(context.outcome, { keep: [0], messages: contentDigest([secret]), withheld: [] })
    assert.deepStrictEqual(context.rounds[0]?.exchanges[0]?.reply, { keep: [0] })
    const compact = auditView(
      record("before_compact", [{ summary: secret }], { cancel: false, summary: secret }),
      "digest"
    )
    assert.notInclude(JSON.stringify(compact), "wJalrXUtnFEMI")
    const none = auditView(record("before_compact", [{ cancel: true }], { cancel: true, summary: null }), "digest")
    assert.deepStrictEqual(none.outcome, { cancel: true, summary: null })
  })

  it("the input (what came in, when extensions changed it) is content too: digested, is_error stays; verbatim with full", () => {
    const r: AuditRecord = {
      ...record("tool_result", [{ content: "[redacted]" }], { content: "[redacted]", is_error: false, rounds: 2 }),
      input: { content: secret, is_error: false }
    }
    const view = auditView(r, "digest")
    assert.notInclude(JSON.stringify(view), "wJalrXUtnFEMI")
    assert.deepStrictEqual(view.input, { content: contentDigest(secret), is_error: false })
    assert.strictEqual(auditView(r, "full"), r)
    const c: AuditRecord = {
      ...record("context", [{ keep: [] }], { keep: [], messages: [], withheld: [] }),
      input: { messages: [secret] }
    }
    const contextView = auditView(c, "digest")
    assert.notInclude(JSON.stringify(contextView), "wJalrXUtnFEMI")
    assert.deepStrictEqual(contextView.input, { messages: contentDigest([secret]) })
  })

  it("tool_call args stay verbatim, in proposals and in the outcome", () => {
    const r = record("tool_call", [{ args: { command: "echo hi" } }], {
      decision: "allow",
      args: { command: "echo hi" }
    })
    assert.strictEqual(auditView(r, "digest"), r)
  })
})

describe("AuditLog.layerJsonl", () => {
  const dir = () => mkdtempSync(join(tmpdir(), "abhed-audit-"))
  // Its proposal holds the content as it came (with a mark added): a proposal can carry the very secret.
  const marker = FakeExtension.fromReplies("marker", {
    tool_result: (req) => ({ content: req.content.endsWith(" [seen]") ? req.content : `${req.content} [seen]` })
  })
  const session = (file: string, options?: Parameters<typeof AuditLog.layerJsonl>[1]) =>
    Effect.gen(function* () {
      const h = yield* ExtensionHost
      yield* h.toolCall({ tool: "read", args: { path: "~/.aws/credentials" } })
      return yield* h.toolResult({
        tool: "read",
        args: { path: "~/.aws/credentials" },
        content: secret,
        is_error: false
      })
    }).pipe(
      Effect.provide(
        ExtensionHost.layerFake([marker], { sessionId: "s" }).pipe(
          Layer.provide(AuditLog.layerJsonl(file, options)),
          Layer.provide(NodeServices.layer)
        )
      )
    )

  it.effect("creates the file 0600 and keeps no content verbatim; args stay", () =>
    Effect.gen(function* () {
      const file = join(dir(), "audit.jsonl")
      const out = yield* session(file)
      assert.strictEqual(out.content, `${secret} [seen]`)
      assert.strictEqual(statSync(file).mode & 0o777, 0o600)
      const text = readFileSync(file, "utf8")
      assert.notInclude(text, "wJalrXUtnFEMI")
      assert.include(text, "~/.aws/credentials")
      assert.include(text, contentDigest(`${secret} [seen]`).sha256)
      // The marker changed the content: the record keeps what came in, as a digest.
      const result = text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .find((r) => r.event === "tool_result")
      assert.deepStrictEqual(result?.input, { content: contentDigest(secret), is_error: false })
    })
  )

  it.effect("content: full keeps content verbatim (the operator opted in)", () =>
    Effect.gen(function* () {
      const file = join(dir(), "audit.jsonl")
      yield* session(file, { content: "full" })
      const text = readFileSync(file, "utf8")
      assert.include(text, "wJalrXUtnFEMI")
      const result = text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .find((r) => r.event === "tool_result")
      assert.deepStrictEqual(result?.input, { content: secret, is_error: false })
    })
  )

  it.effect("an existing file keeps its mode (and is appended to)", () =>
    Effect.gen(function* () {
      const file = join(dir(), "audit.jsonl")
      writeFileSync(file, "")
      chmodSync(file, 0o640)
      yield* session(file)
      assert.strictEqual(statSync(file).mode & 0o777, 0o640)
      assert.isAbove(readFileSync(file, "utf8").length, 0)
    })
  )
})
