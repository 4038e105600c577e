import { AuditLog, ExtensionHost, FakeExtension, Telemetry } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import * as HookTelemetry from "../../packages/cli/src/hook/HookTelemetry.ts"
import { within } from "../support/extension-helpers.ts"
import { logsOf, type Receiver, spansOf, startReceiver } from "../support/otel-receiver.ts"

/**
 * What a careless extension or hook puts in its reason, quoted however it quotes it, and what of it leaves the host
 * (docs/observability.md, "What leaves the host"): the args' JSON text with its escapes, an argv as the command line
 * it makes, a tool's output a redactor names, the folder a hook runs in. None of it, whatever the protocol.
 */

// Each line shorter than a quote: only the escaped whole, as the reason holds it, is one.
const Env = "K1=ab12\nK2=cd34\nK3=ef56\nK4=gh78"
const EnvPieces = ["K1=ab12", "K2=cd34", "K3=ef56", "K4=gh78"]
const Argv = ["git", "push", "--force", "origin", "zz-main"]
const Output = 'pw="hunter22"\nuser=bob\nhost=db1\n'
const OutputPieces = ["hunter22", "user=bob", "host=db1"]
const EnvMarker = "tok-ENV-MARKER-5150"

const withReceiver = <A, E>(f: (r: Receiver) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => startReceiver("ok")),
    f,
    (r) => Effect.promise(() => r.close())
  )

const reasonsIn = (receiver: Receiver, key: string): Array<string> =>
  spansOf(receiver.received).flatMap((s) => {
    const reason = s.attributes[key]
    return typeof reason === "string" ? [reason] : []
  })

describe("OTLP export: a reason that quotes what stays home, however it quotes it", () => {
  for (const protocol of ["http/protobuf", "http/json"] as const)
    it.live(`${protocol}: the args' JSON text, an argv as a command line, a tool's output JSON-escaped`, () =>
      withReceiver((receiver) =>
        Effect.gen(function* () {
          const guard = FakeExtension.fromReplies("a-guard", {
            tool_call: (r) =>
              Array.isArray(r.args["argv"])
                ? { block: true, reason: `blocked: ${r.args["argv"].join(" ")}` }
                : { block: true, reason: `blocked: ${JSON.stringify(r.args)}` }
          })
          // A tool_result reply has no reason (the protocol drops it): what it names of the output leaves nowhere.
          const redactor = FakeExtension.fromReplies("b-redactor", {
            tool_result: (r) => ({ content: "[redacted]", reason: `redacted ${JSON.stringify(r.content)}` })
          })
          yield* Effect.gen(function* () {
            const h = yield* ExtensionHost
            const env = yield* h.toolCall({ tool: "bash", args: { command: "env", env: Env }, call_id: "c1" })
            assert.include(env.reasons[0]?.reason, JSON.stringify(Env).slice(1, -1))
            yield* h.toolCall({ tool: "exec", args: { argv: Argv }, call_id: "c2" })
            const result = yield* h.toolResult({
              tool: "bash",
              args: { command: "cat" },
              content: Output,
              is_error: false,
              call_id: "c3"
            })
            assert.strictEqual(result.content, "[redacted]")
          }).pipe(
            Effect.provide(ExtensionHost.layerFake([guard, redactor], { sessionId: "sess-content" })),
            Effect.provide(AuditLog.layerNone),
            Effect.provide(
              Telemetry.layer(Telemetry.forEndpoint(receiver.url, { protocol, timeoutMillis: within(2000) }))
            )
          )
          for (const r of receiver.received) {
            const raw = r.raw.toString("latin1")
            for (const piece of [...EnvPieces, ...OutputPieces, "--force origin zz-main"])
              assert.notInclude(raw, piece, `${piece} sent to ${r.path}`)
          }
          // The words around the quotes still leave.
          const reasons = reasonsIn(receiver, "abhed.extension.reason")
          assert.includeMembers(reasons, ["blocked: […]", 'blocked: {"command":"env","env":"[…]"}'])
          const bodies = logsOf(receiver.received).map((l) => String(l.body))
          assert.isTrue(
            bodies.some((b) => b.includes("blocked: […]")),
            bodies.join("\n")
          )
        })
      )
    )
})

describe("OTLP export: a reason's quotes are cut when the batch is written", () => {
  it.live(
    "the args are read by a dispatch and what follows its decision as often as without telemetry; the cut reads them when the batch is written",
    () =>
      withReceiver((receiver) =>
        Effect.gen(function* () {
          const guard = FakeExtension.fromReplies("a-guard", {
            tool_call: (r) => ({ block: true, reason: `blocked: ${String(r.args["command"])}` })
          })
          // How often the dispatch reads the call's args: by the time it returns, and in all.
          const readsOf = (telemetry: Layer.Layer<never>) => {
            const reads = { n: 0 }
            const args = {
              get command() {
                reads.n++
                return "rm -rf /home/alice/project"
              }
            }
            return Effect.gen(function* () {
              const h = yield* ExtensionHost
              const outcome = yield* h.toolCall({ tool: "bash", args, call_id: "c1" })
              assert.strictEqual(outcome.decision, "deny")
              // What waits for after the decision has run (AfterDecision.ts): the batch is not written yet.
              yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
              yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
              return reads.n
            }).pipe(
              Effect.provide(ExtensionHost.layerFake([guard], { sessionId: "sess-path" })),
              Effect.provide(AuditLog.layerNone),
              Effect.provide(telemetry),
              Effect.map((onPath) => ({ onPath, all: reads.n }))
            )
          }
          const without = yield* readsOf(Layer.empty)
          const exported = yield* readsOf(
            // No batch is written before the session's end.
            Telemetry.layer(
              Telemetry.forEndpoint(receiver.url, {
                protocol: "http/json",
                timeoutMillis: within(2000),
                intervalMillis: 600_000
              })
            )
          )
          assert.strictEqual(exported.onPath, without.onPath)
          assert.isAbove(exported.all, exported.onPath)
          assert.include(reasonsIn(receiver, "abhed.extension.reason"), "blocked: […]")
        })
      )
  )
})

describe("abhed-ext hook's export: its reason", () => {
  const run = (request: Record<string, unknown>, reason: string): HookTelemetry.ObservedRun => ({
    request,
    event: "tool_call",
    tool: undefined,
    result: { _tag: "Exited", code: 2, stdout: "", stderr: reason },
    reply: { block: true, reason },
    took: Duration.millis(3)
  })

  it("a PostToolUse hook's reason that quotes the tool's output JSON-escaped leaves without it", () => {
    const reason = `redacted ${JSON.stringify(Output)}`
    const request = { event: "tool_result", session_id: "s", content: Output }
    assert.strictEqual(
      HookTelemetry.runAttributes({ ...run(request, reason), event: "tool_result" }, "bash", "claude")[
        "abhed.hook.reason"
      ],
      'redacted "[…]"'
    )
  })

  it.live(
    "is worked out when the batch is written, not as the answer goes out; without the folder and environment the hook ran with",
    () =>
      withReceiver((receiver) =>
        Effect.gen(function* () {
          const telemetry = HookTelemetry.fromEnv(
            {
              OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
              OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
              HOOK_TOKEN: EnvMarker
            },
            "bash",
            "claude"
          )
          // Counts the walks of what the hook read: only cutting quotes out of a reason walks it.
          let walks = 0
          const request = {
            event: "tool_call",
            session_id: "s",
            get args() {
              walks++
              return { command: "rm -rf ./build" }
            }
          }
          yield* Effect.sync(() => {
            telemetry.observe(run(request, `blocked: rm -rf outside ${process.cwd()} (token ${EnvMarker})`))
            // The answer goes out after `observe` returns: nothing of the request walked yet.
            assert.strictEqual(walks, 0)
          }).pipe(Effect.provide(Layer.fresh(telemetry.layer)))
          assert.isAbove(walks, 0)
          assert.include(reasonsIn(receiver, "abhed.hook.reason"), "blocked: rm -rf outside […] (token […])")
          const log = logsOf(receiver.received).find((l) => l.attributes["event.name"] === "abhed.hook")
          assert.strictEqual(log?.attributes["abhed.hook.reason"], "blocked: rm -rf outside […] (token […])")
          assert.include(String(log?.body), "blocked: rm -rf outside […] (token […])")
          for (const r of receiver.received)
            for (const marker of [process.cwd(), EnvMarker]) assert.notInclude(r.raw.toString("latin1"), marker, r.path)
        })
      )
  )
})
