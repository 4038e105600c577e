import { AuditLog, ExtensionHost, FakeExtension, Telemetry } from "@abhed/host"
import { Defaults } from "@abhed/protocol"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { fixture, fixtureConfig, python, within } from "../support/extension-helpers.ts"
import { logsOf, type Mode, type Receiver, spansOf, startReceiver } from "../support/otel-receiver.ts"

/**
 * What a hostile or careless party can put in the export's way, and what still never leaves the host: a policy hook
 * that dies quoting the args, a tool name of a megabyte, a header meant for one signal alone.
 */
const ArgMarker = "ARG-MARKER-c0ffee"

const withReceiver = <A, E>(f: (r: Receiver) => Effect.Effect<A, E>, mode: Mode = "ok") =>
  Effect.acquireUseRelease(
    Effect.promise(() => startReceiver(mode)),
    f,
    (r) => Effect.promise(() => r.close())
  )

const quiet = [FakeExtension.fromReplies("a-quiet", { tool_call: () => ({}) })]

/** `program` on a host over `quiet` (with `hooks`), exporting `settings`. */
const onHost = <A, E>(
  program: Effect.Effect<A, E, ExtensionHost>,
  settings: Telemetry.TelemetrySettings,
  hooks: Parameters<typeof ExtensionHost.layerFake>[1]["policyHooks"] = [],
  sessionId = "sess-hostile"
) =>
  program.pipe(
    Effect.provide(ExtensionHost.layerFake(quiet, { sessionId, policyHooks: hooks })),
    Effect.provide(AuditLog.layerNone),
    Effect.provide(Telemetry.layer(settings))
  )

for (const protocol of ["http/protobuf", "http/json"] as const) {
  describe(`OTLP export (${protocol}) against what a hostile party sends`, () => {
    it.live(
      "a policy hook that dies quoting the args: the dispatch's span says it failed and how, never the message",
      () =>
        withReceiver((receiver) =>
          Effect.gen(function* () {
            // An operator's hook that throws as JSON.parse does: its message quotes what it read.
            const parse = {
              name: "parse",
              decide: (call: { readonly args: Record<string, unknown> }) =>
                Effect.sync(() => JSON.parse(String(call.args["command"])) as never)
            }
            const exit = yield* onHost(
              Effect.flatMap(ExtensionHost, (h) =>
                Effect.exit(h.toolCall({ tool: "bash", args: { command: `rm ${ArgMarker}` }, call_id: "c1" }))
              ),
              Telemetry.forEndpoint(receiver.url, { protocol, timeoutMillis: within(2000) }),
              [parse]
            )
            assert.strictEqual(exit._tag, "Failure")
            const span = spansOf(receiver.received).find((s) => s.name === "abhed.tool_call")
            assert.ok(span)
            assert.deepStrictEqual(span.status, { code: 2, message: undefined })
            assert.deepStrictEqual(span.events, [
              { name: "exception", attributes: { "exception.type": "SyntaxError" } }
            ])
            for (const r of receiver.received) assert.notInclude(r.raw.toString("latin1"), ArgMarker, r.path)
          })
        )
    )

    it.live("a tool name, call id and session id of 100 000 chars leave as 256: one span is never a megabyte", () =>
      withReceiver((receiver) =>
        Effect.gen(function* () {
          const huge = (c: string) => c.repeat(100_000)
          const decision = yield* onHost(
            Effect.flatMap(ExtensionHost, (h) => h.toolCall({ tool: huge("t"), args: {}, call_id: huge("c") })),
            Telemetry.forEndpoint(receiver.url, { protocol, timeoutMillis: within(2000) }),
            [],
            huge("s")
          ).pipe(Effect.map((o) => o.decision))
          assert.strictEqual(decision, "allow")
          const span = spansOf(receiver.received).find((s) => s.name === "abhed.tool_call")
          assert.strictEqual(span?.attributes["gen_ai.tool.name"], `${"t".repeat(255)}…`)
          assert.strictEqual(span?.attributes["gen_ai.tool.call.id"], `${"c".repeat(255)}…`)
          assert.strictEqual(span?.attributes["gen_ai.conversation.id"], `${"s".repeat(255)}…`)
          const log = logsOf(receiver.received).find((l) => l.attributes["abhed.event"] === "tool_call")
          assert.strictEqual(log?.attributes["gen_ai.tool.name"], `${"t".repeat(255)}…`)
          assert.deepInclude(JSON.parse(String(log?.body)), {
            tool: `${"t".repeat(255)}…`,
            call_id: `${"c".repeat(255)}…`,
            session_id: `${"s".repeat(255)}…`
          })
          // The metrics' requests carry every series this worker's earlier files made (one registry a process):
          // their size says nothing here; that none holds a name longer than its bound does.
          for (const r of receiver.received) {
            if (r.path !== "/v1/metrics") assert.isBelow(r.raw.length, 20_000, r.path)
            for (const c of ["t", "c", "s"]) assert.isFalse(r.raw.includes(c.repeat(257)), r.path)
          }
        })
      )
    )
  })
}

describe("OTLP export: every event's content stays home", () => {
  it.live(
    "a system prompt, a compaction, a tool of an extension's (its args and result) and what the extensions proposed instead: none is sent",
    () =>
      withReceiver((receiver) =>
        Effect.gen(function* () {
          const Markers = ["SYSTEM-MARKER-5e1f", "COMPACT-MARKER-2a9d", "RESULT-MARKER-88c1", "PROPOSED-MARKER-d3b7"]
          const [system, compact, result, proposed] = Markers
          const tool = { name: "lookup", description: "lookup", input_schema: { type: "object" } }
          const rewriter = FakeExtension.fromReplies("a-rewriter", {
            before_agent_start: () => ({ system: `${proposed}`, reason: "policy preamble" }),
            before_compact: () => ({ summary: `${proposed}` }),
            list_tools: () => ({ tools: [tool] }),
            invoke_tool: () => ({ result: `${result}` })
          })
          yield* Effect.gen(function* () {
            const h = yield* ExtensionHost
            yield* h.beforeAgentStart(`${system}`)
            yield* h.beforeCompact([{ role: "user", content: compact }])
            yield* h.invokeTool({ tool: "lookup", args: { q: ArgMarker }, call_id: "c1" })
          }).pipe(
            Effect.provide(ExtensionHost.layerFake([rewriter], { sessionId: "sess-hostile" })),
            Effect.provide(AuditLog.layerNone),
            Effect.provide(Telemetry.layer(Telemetry.forEndpoint(receiver.url, { timeoutMillis: within(2000) })))
          )
          const names = spansOf(receiver.received).map((s) => s.name)
          for (const name of ["abhed.before_agent_start", "abhed.before_compact", "abhed.invoke_tool"])
            assert.include(names, name)
          for (const r of receiver.received)
            for (const marker of [...Markers, ArgMarker])
              assert.notInclude(r.raw.toString("latin1"), marker, `${marker} sent to ${r.path}`)
        })
      )
  )
})

describe("OTLP export: reasons that quote what stays home", () => {
  for (const protocol of ["http/protobuf", "http/json"] as const)
    it.live(
      `${protocol}: a guard quoting the args, another quoting part of them, a rewriter quoting its rewrite: the reasons leave without the quotes`,
      () =>
        withReceiver((receiver) =>
          Effect.gen(function* () {
            const Secret = "AKIA-SECRET-MARKER-77f1"
            const Rewrite = "REWRITE-MARKER-91ab"
            const guard = FakeExtension.fromReplies("a-guard", {
              tool_call: (r) =>
                String(r.args["command"]).includes("rm")
                  ? { block: true, reason: `blocked: \`${String(r.args["command"])}\` deletes files` }
                  : {}
            })
            // Part of a longer value is a quote too.
            const asker = FakeExtension.fromReplies("b-asker", {
              tool_call: (r) => {
                const command = String(r.args["command"])
                const push = command.indexOf("git push")
                return push >= 0 ? { ask: true, reason: `asks before \`${command.slice(push)}\`` } : {}
              }
            })
            const rewriter = FakeExtension.fromReplies("c-rewriter", {
              tool_call: (r) =>
                String(r.args["command"]).startsWith("make")
                  ? { args: { command: `${Rewrite} make` }, reason: `runs it as ${Rewrite} make, in the sandbox` }
                  : {}
            })
            yield* Effect.gen(function* () {
              const h = yield* ExtensionHost
              const denied = yield* h.toolCall({
                tool: "bash",
                args: { command: `rm -rf ${ArgMarker}` },
                call_id: "c1"
              })
              assert.strictEqual(denied.decision, "deny")
              // The agent keeps the reason as it was given: only what leaves is cut.
              assert.include(denied.reasons[0]?.reason, ArgMarker)
              yield* h.toolCall({ tool: "bash", args: { command: "make" }, call_id: "c2" })
              const asked = yield* h.toolCall({
                tool: "bash",
                args: { command: `cd /repo && git push --force ${Secret}` },
                call_id: "c3"
              })
              assert.strictEqual(asked.decision, "ask")
            }).pipe(
              Effect.provide(ExtensionHost.layerFake([guard, asker, rewriter], { sessionId: "sess-hostile" })),
              Effect.provide(AuditLog.layerNone),
              Effect.provide(
                Telemetry.layer(Telemetry.forEndpoint(receiver.url, { protocol, timeoutMillis: within(2000) }))
              )
            )
            for (const r of receiver.received)
              for (const marker of [ArgMarker, Secret, Rewrite])
                assert.notInclude(r.raw.toString("latin1"), marker, `${marker} sent to ${r.path}`)
            // What the reasons say around the quotes still leaves: who decided, and why, in their words.
            const reasons = spansOf(receiver.received).flatMap((s) => {
              const reason = s.attributes["abhed.extension.reason"]
              return typeof reason === "string" ? [reason] : []
            })
            assert.includeMembers(reasons, ["blocked: `[…]` deletes files", "asks before `[…]`"])
            assert.isTrue(
              reasons.some((r) => r.startsWith("runs it as […]")),
              reasons.join(" | ")
            )
            const bodies = logsOf(receiver.received).map((l) => String(l.body))
            assert.isTrue(bodies.some((b) => b.includes("blocked: `[…]` deletes files")))
          })
        )
    )
})

describe("OTLP export: extensions whose deaths carry what they read", () => {
  it.live(
    "one that writes the request to stderr and exits, one that writes it as a stray line, one that answers it as garbage: only their deaths' shapes leave",
    () =>
      withReceiver((receiver) =>
        Effect.gen(function* () {
          const leaky = (mode: string) =>
            fixtureConfig("otel-leaky.py", {
              name: `leak-${mode}`,
              args: [...python.args, fixture("otel-leaky.py"), mode]
            })
          const warnings: Array<string> = []
          const capture = Logger.make((o) => {
            warnings.push(String(o.message))
          })
          const decision = yield* Effect.flatMap(ExtensionHost, (h) =>
            h.toolCall({ tool: "bash", args: { command: `cat ${ArgMarker}` }, call_id: "c1" })
          ).pipe(
            Effect.provide(
              ExtensionHost.layer(
                {
                  extensions: [leaky("stderr"), leaky("stray"), leaky("garbage")],
                  policy: Defaults.policy,
                  max_rewrite_rounds: Defaults.max_rewrite_rounds,
                  builtin_tools: []
                },
                { sessionId: "sess-hostile", baseDir: fixture(".") }
              )
            ),
            Effect.provide(AuditLog.layerNone),
            Effect.provide(Telemetry.layer(Telemetry.forEndpoint(receiver.url, { timeoutMillis: within(2000) }))),
            // With effect's tracer logger too: it makes each log line an event of the span it is logged in.
            Effect.provide(Logger.layer([capture, Logger.tracerLogger]))
          )
          assert.strictEqual(decision.decision, "allow")
          // The operator's own log has the stderr line (the dispatch's span was current when it was logged) ...
          assert.ok(
            warnings.some((w) => w.includes("leak-stderr is dead") && w.includes(ArgMarker)),
            warnings.join("\n")
          )
          // ... the collector has the deaths by their shapes, and nothing of what the extensions read.
          const spans = spansOf(receiver.received)
          const call = spans.find((s) => s.name === "abhed.tool_call")
          const statuses = spans
            .filter((s) => s.name === "abhed.extension" && s.parentSpanId === call?.spanId)
            .map(
              (s) => `${String(s.attributes["abhed.extension.name"])} ${String(s.attributes["abhed.extension.status"])}`
            )
            .sort()
          assert.deepStrictEqual(statuses, ["leak-garbage malformed", "leak-stderr exited", "leak-stray unsolicited"])
          for (const r of receiver.received) assert.notInclude(r.raw.toString("latin1"), ArgMarker, r.path)
        })
      )
  )
})

describe("OTLP export: a signal's own headers", () => {
  it.live("OTEL_EXPORTER_OTLP_TRACES_HEADERS goes with the traces' requests alone, over the common headers", () =>
    withReceiver((receiver) =>
      Effect.gen(function* () {
        const { settings } = Telemetry.fromEnv({
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_HEADERS: "x-team=guards,authorization=Bearer%20common",
          OTEL_EXPORTER_OTLP_TRACES_HEADERS: "authorization=Bearer%20traces",
          OTEL_EXPORTER_OTLP_TIMEOUT: String(within(2000))
        })
        assert.ok(settings)
        yield* onHost(
          Effect.flatMap(ExtensionHost, (h) => h.toolCall({ tool: "read", args: {}, call_id: "c1" })),
          settings
        )
        const byPath = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => r.headers)
        for (const path of ["/v1/traces", "/v1/metrics", "/v1/logs"]) assert.isNotEmpty(byPath(path), path)
        for (const h of byPath("/v1/traces"))
          assert.deepInclude(h, { "x-team": "guards", authorization: "Bearer traces" })
        for (const path of ["/v1/metrics", "/v1/logs"])
          for (const h of byPath(path)) assert.deepInclude(h, { "x-team": "guards", authorization: "Bearer common" })
      })
    )
  )
})

/** A session of denies and allows, a little apart, so that batches go out (and meet the collector) while it runs. */
const decisions = Effect.gen(function* () {
  const h = yield* ExtensionHost
  const out: Array<string> = []
  for (let i = 0; i < 12; i++) {
    const call = yield* h.toolCall({ tool: i % 2 === 0 ? "rm" : "ls", args: { path: ArgMarker }, call_id: `c${i}` })
    out.push(call.decision)
    yield* Effect.sleep(5)
  }
  return out
})
const denyRm = [FakeExtension.fromReplies("a-deny", { tool_call: (r) => (r.tool === "rm" ? { block: true } : {}) })]

const hostile: ReadonlyArray<readonly [Mode, string, RegExp]> = [
  ["413", "answers 413 (too large)", /\((traces|metrics|logs): HTTP 413\)$/],
  ["429", "answers 429 with a retry-after", /\((traces|metrics|logs): HTTP 429\)$/],
  ["redirect", "redirects (307) elsewhere", /\((traces|metrics|logs): HTTP 307\)$/],
  ["reset", "resets the connection", /\((traces|metrics|logs): unreachable \(read ECONNRESET\)\)$/],
  ["drip", "drips its answer's headers a byte at a time", /\((traces|metrics|logs): no answer within 1s\)$/]
]

describe("OTLP export against a collector that misbehaves", () => {
  it.live(
    "a collector that answers 200 and a body without end: the status is the answer, nothing is lost or warned",
    () =>
      withReceiver(
        (receiver) =>
          Effect.gen(function* () {
            const warnings: Array<string> = []
            const capture = Logger.make((o) => {
              warnings.push(String(o.message))
            })
            const exported = yield* decisions.pipe(
              Effect.provide(ExtensionHost.layerFake(denyRm, { sessionId: "sess-hostile" })),
              Effect.provide(AuditLog.layerNone),
              Effect.provide(Telemetry.layer(Telemetry.forEndpoint(receiver.url, { timeoutMillis: within(1000) }))),
              Effect.provide(Logger.layer([capture]))
            )
            assert.deepStrictEqual(exported, [
              "deny",
              "allow",
              "deny",
              "allow",
              "deny",
              "allow",
              "deny",
              "allow",
              "deny",
              "allow",
              "deny",
              "allow"
            ])
            assert.isNotEmpty(receiver.received)
            assert.deepStrictEqual(
              warnings.filter((w) => w.includes("telemetry")),
              []
            )
          }),
        "flood"
      )
  )

  for (const [mode, what, named] of hostile) {
    it.live(`a collector that ${what}: the same decisions, the end within one bound, one warning that names it`, () =>
      withReceiver(
        (receiver) =>
          Effect.gen(function* () {
            const warnings: Array<string> = []
            const capture = Logger.make((o) => {
              warnings.push(String(o.message))
            })
            const run = (settings: Telemetry.TelemetrySettings | undefined) =>
              decisions.pipe(
                Effect.provide(ExtensionHost.layerFake(denyRm, { sessionId: "sess-hostile" })),
                Effect.provide(AuditLog.layerNone),
                Effect.provide(settings === undefined ? Layer.empty : Telemetry.layer(settings)),
                Effect.provide(Logger.layer([capture]))
              )
            const plain = yield* run(undefined)
            const started = Date.now()
            const exported = yield* run(
              Telemetry.forEndpoint(receiver.url, {
                timeoutMillis: 1000,
                maxBatchSize: 2,
                intervalMillis: 20,
                headers: { authorization: "Bearer collector-token" }
              })
            )
            const elapsed = Date.now() - started
            assert.deepStrictEqual(exported, plain)
            assert.isBelow(elapsed, within(1000))
            assert.isNotEmpty(receiver.attempts)
            // Not followed: the headers hold a credential, and the collector named is the one trusted with it.
            assert.deepStrictEqual(receiver.redirected, [])
            const telemetry = warnings.filter((w) => w.includes("telemetry"))
            assert.strictEqual(telemetry.length, 1, telemetry.join("\n"))
            assert.match(
              telemetry[0] ?? "",
              /^telemetry: not exported: \d+ spans?, \d+ log records?, \d+ metrics exports? /
            )
            assert.match(telemetry[0] ?? "", named)
            assert.notInclude(telemetry[0] ?? "", "collector-token")
          }),
        mode
      )
    )
  }
})
