import { ScriptedModel } from "@abhed/ai"
import { Approval } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Effect, References } from "effect"
import { LanguageModel } from "effect/ai"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { agent, AgentTools, host } from "../../docs/embedding/ai-agent.ts"
import { runCli, runProcess } from "../support/cli-helpers.ts"
import { Patient } from "../support/extension-helpers.ts"

/**
 * The effect/ai example (docs/embedding/ai-agent.ts) over the real example extensions (docs/examples/abhed.json),
 * with a scripted model: what each extension decided reaches the model, and the audit shows what the host saw.
 */

const examples = NodePath.join(import.meta.dirname, "..", "..", "docs", "examples")

/**
 * The example config with `Patient` timeouts (its own 2 s would fire on a busy machine, and these tests are not
 * about timeouts), each extension still run in the examples' folder.
 */
const patientConfig = (() => {
  const config = JSON.parse(NodeFs.readFileSync(NodePath.join(examples, "abhed.json"), "utf8"))
  delete config["$schema"]
  config.extensions = config.extensions.map((e: object) => ({ ...e, ...Patient, cwd: examples }))
  const file = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-ai-config-")), "abhed.json")
  NodeFs.writeFileSync(file, JSON.stringify(config))
  return file
})()

const auditFile = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-ai-")), "audit.jsonl")
const readAudit = (): ReadonlyArray<{ readonly event: string; readonly call_id?: string }> =>
  NodeFs.readFileSync(auditFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))

/** An audit record without what differs between two runs of the same requests: seq and timings. */
const comparable = (record: unknown): unknown =>
  JSON.parse(
    JSON.stringify(record, (key, value) =>
      key === "seq" || key === "time" || key === "duration_ms" || key === "latency_ms" ? undefined : value
    )
  )

const ran: Array<string> = []
const handlers = AgentTools.toLayer({
  read: ({ path }) => Effect.sync(() => (ran.push(`read ${path}`), `${path}: aws key AKIAABCDEFGHIJKLMNOP`)),
  bash: ({ command }) => Effect.sync(() => (ran.push(`bash ${command}`), `ran ${command}`))
})

const long = "grep -rn TODO src/ packages/ docs/ test/ | sort | head -n 5"

const script: ReadonlyArray<ScriptedModel.Turn> = [
  () => [
    ScriptedModel.toolCall("c-secret", "read", { path: "config/secrets.json" }),
    ScriptedModel.toolCall("c-notes", "read", { path: "notes.txt" }),
    ScriptedModel.toolCall("c-push", "bash", { command: "git push origin main" }),
    ScriptedModel.toolCall("c-long", "bash", { command: long }),
    ScriptedModel.toolCall("c-count", "word_count", { text: "one two three" }),
    ScriptedModel.toolCall("c-bad", "word_count", { text: 42 }),
    ScriptedModel.finish("tool-calls")
  ],
  () => [ScriptedModel.text("done"), ScriptedModel.finish("stop")]
]

describe("docs/embedding/ai-agent", () => {
  it.live(
    "a scripted model over the real example extensions",
    () =>
      Effect.gen(function* () {
        const asked: Array<Approval.ApprovalRequest> = []
        const model = yield* ScriptedModel.make(script)
        const { history, text, turns } = yield* agent("tidy up").pipe(
          Effect.provideService(LanguageModel.LanguageModel, model),
          Effect.provide(Approval.Approver.layer((request) => Effect.sync(() => (asked.push(request), true))))
        )
        // Turn 2's prompt holds every result of turn 1 and the approved call's, as the model reads them.
        const results = ScriptedModel.toolResults(model.prompts[1])
        const wrapped = "sandbox-run -- bash -c 'git push origin main'"

        // A deny reaches the model with the reasons, and the tool never ran.
        assert.deepStrictEqual(results.get("c-secret"), {
          isFailure: true,
          result: {
            type: "execution-denied",
            reason:
              "block-secrets: secrets are off limits; secrets-guard: config/secrets.json matches secret pattern **/*secret*"
          }
        })
        // An allowed read, redacted before the model saw it.
        assert.deepStrictEqual(results.get("c-notes"), { isFailure: false, result: "notes.txt: aws key [redacted]" })
        // The ask became a tool-approval-request; the Approver saw the settled (sandboxed) args; the approved call ran
        // exactly those, without a second tool_call.
        assert.deepStrictEqual(asked, [
          {
            tool: "bash",
            args: { command: wrapped },
            reasons: [{ extension: "secrets-guard", reason: "git push publishes commits; confirm first" }]
          }
        ])
        assert.deepStrictEqual(results.get("c-push"), { isFailure: false, result: `ran ${wrapped}` })
        // The sandbox's rewrite of the long command no longer fits the 64-character Schema: refused, naming it.
        const refused = results.get("c-long")
        assert.isTrue(refused?.isFailure)
        assert.include(JSON.stringify(refused?.result), "args rewritten by sandbox no longer fit bash's parameters")
        // An extension's tool with valid args, and refused with invalid ones: audited, sent to no extension.
        assert.deepStrictEqual(results.get("c-count"), {
          isFailure: false,
          result: { lines: 1, words: 3, characters: 13 }
        })
        const bad = results.get("c-bad")
        assert.isTrue(bad?.isFailure)
        assert.include(JSON.stringify(bad?.result), "args do not fit word_count's parameters")
        assert.sameMembers(ran, ["read notes.txt", `bash ${wrapped}`])

        // The host's audit: one tool_call per call that got that far (c-push once), tool_result for those that ran.
        const audit = readAudit()
        const events = (id: string) => audit.filter((r) => r.call_id === id).map((r) => r.event)
        assert.deepStrictEqual(events("c-secret"), ["tool_call"])
        assert.deepStrictEqual(events("c-notes"), ["tool_call", "tool_result"])
        assert.deepStrictEqual(events("c-push"), ["tool_call", "tool_result"])
        assert.deepStrictEqual(events("c-long"), ["tool_call"])
        assert.deepStrictEqual(events("c-count"), ["tool_call", "invoke_tool", "tool_result"])
        assert.deepStrictEqual(events("c-bad"), ["tool_call"])
        // before_agent_start: secrets-guard's rules were appended to the system prompt.
        // The same requests through the CLI give the same audit records (but for seq and timings).
        const calls = ["c-secret", "c-notes", "c-push", "c-long", "c-count"]
        const requests = [
          { event: "tool_call", call_id: "c-secret", tool: "read", args: { path: "config/secrets.json" } },
          { event: "tool_call", call_id: "c-notes", tool: "read", args: { path: "notes.txt" } },
          {
            event: "tool_result",
            call_id: "c-notes",
            tool: "read",
            args: { path: "notes.txt" },
            content: "notes.txt: aws key AKIAABCDEFGHIJKLMNOP",
            is_error: false
          },
          { event: "tool_call", call_id: "c-push", tool: "bash", args: { command: "git push origin main" } },
          {
            event: "tool_result",
            call_id: "c-push",
            tool: "bash",
            args: { command: wrapped },
            content: `ran ${wrapped}`,
            is_error: false
          },
          { event: "tool_call", call_id: "c-long", tool: "bash", args: { command: long } },
          { event: "tool_call", call_id: "c-count", tool: "word_count", args: { text: "one two three" } },
          { event: "invoke_tool", call_id: "c-count", tool: "word_count", args: { text: "one two three" } },
          {
            event: "tool_result",
            call_id: "c-count",
            tool: "word_count",
            args: { text: "one two three" },
            content: `{"lines":1,"words":3,"characters":13}`,
            is_error: false
          }
        ]
        const cliAudit = NodePath.join(NodePath.dirname(auditFile), "cli-audit.jsonl")
        const cli = yield* Effect.promise(() =>
          runCli(["run", "--config", patientConfig, "--audit", cliAudit, "--session-id", "s-1"], {
            input: requests.map((r) => JSON.stringify(r)).join("\n") + "\n"
          })
        )
        assert.strictEqual(cli.code, 0, cli.stderr)
        const cliRecords = NodeFs.readFileSync(cliAudit, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line))
        const ofCalls = (records: ReadonlyArray<{ readonly call_id?: string }>) =>
          calls.flatMap((id) => records.filter((r) => r.call_id === id).map(comparable))
        assert.strictEqual(ofCalls(audit).length, requests.length)
        assert.deepStrictEqual(ofCalls(audit), ofCalls(cliRecords))

        const system = model.prompts[0]?.content[0]
        assert.strictEqual(system?.role, "system")
        assert.match(
          system?.role === "system" ? system.content : "",
          /^You are careful\.\n\nFiles matching .* are off limits/
        )
        assert.strictEqual(history.content[0], system)
        assert.strictEqual(model.prompts.length, 2)
        assert.deepStrictEqual([text, turns], ["done", 2])
      }).pipe(
        Effect.provide(handlers),
        Effect.provide(host(patientConfig, auditFile)),
        Effect.provideService(References.MinimumLogLevel, "Error")
      ),
    120_000
  )
})

describe("docs/embedding.md's first example", () => {
  const file = NodePath.join(import.meta.dirname, "..", "..", "docs", "embedding", "ai-agent.ts")

  it("is docs/embedding/ai-agent.ts, verbatim", () => {
    const doc = NodeFs.readFileSync(NodePath.join(import.meta.dirname, "..", "..", "docs", "embedding.md"), "utf8")
    const first = /```ts\n([\s\S]*?)```/.exec(doc)?.[1]
    assert.strictEqual(first, NodeFs.readFileSync(file, "utf8"))
  })

  it("runs as a program: done; the secret read denied, the notes read, the push asked about and refused unattended", async () => {
    const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-ai-main-"))
    const audit = NodePath.join(dir, "audit.jsonl")
    const run = await runProcess(process.execPath, [file, patientConfig, audit])
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(run.stdout, "Done.\n")
    const records: ReadonlyArray<{
      event: string
      call_id?: string
      outcome?: { decision?: string; content?: string }
    }> = NodeFs.readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
    const of = (id: string) => records.filter((r) => r.call_id === id)
    assert.deepStrictEqual(
      of("c-secret").map((r) => [r.event, r.outcome?.decision]),
      [["tool_call", "deny"]]
    )
    assert.deepStrictEqual(
      of("c-notes").map((r) => r.event),
      ["tool_call", "tool_result"]
    )
    assert.deepStrictEqual(
      of("c-push").map((r) => [r.event, r.outcome?.decision]),
      [["tool_call", "ask"]]
    )
    assert.deepStrictEqual(
      records.map((r) => r.event).filter((e) => e.startsWith("session")),
      ["session_start", "session_end"]
    )
  }, 120_000)
})
