import { AuditLog, ExtensionHost, FakeExtension, HostMetrics, Telemetry } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Logger, Metric } from "effect"
import { createHash } from "node:crypto"
import { within } from "../support/extension-helpers.ts"
import {
  logsOf,
  metricsOf,
  type Mode,
  type Receiver,
  resourceOf,
  spansOf,
  startReceiver
} from "../support/otel-receiver.ts"

/**
 * Decisions exported over OTLP/HTTP to a local receiver, in both protocols: a session with a deny, an ask, a
 * rewrite over two rounds and an extension that dies. Content never leaves: the markers below are searched for in
 * the raw bytes of every request.
 */
const ArgMarker = "ARG-MARKER-7f3a"
const RewriteMarker = "REWRITE-MARKER-51c2"
const ContentMarker = "CONTENT-MARKER-9d0e"
const ContextMarker = "CONTEXT-MARKER-e44b"
const RedactMarker = "REDACT-MARKER-08aa"
const Markers = [ArgMarker, RewriteMarker, ContentMarker, ContextMarker, RedactMarker]

const extensions = [
  FakeExtension.fromReplies("a-deny", {
    tool_call: (r) => (r.tool === "rm" ? { block: true, reason: "rm is not allowed" } : {}),
    tool_result: () => ({ content: RedactMarker })
  }),
  FakeExtension.fromReplies("b-ask", {
    tool_call: (r) => (r.tool === "curl" ? { ask: true, reason: "network access" } : {})
  }),
  FakeExtension.fromReplies("c-rewrite", {
    tool_call: (r) => (r.tool === "edit" && r.args["path"] !== RewriteMarker ? { args: { path: RewriteMarker } } : {})
  }),
  FakeExtension.make("d-dead", (r) =>
    r.event === "tool_call" ? Effect.fail(FakeExtension.FakeExit.code(3)) : Effect.succeed({})
  )
]

const session = Effect.gen(function* () {
  const h = yield* ExtensionHost
  const denied = yield* h.toolCall({ tool: "rm", args: { path: ArgMarker }, call_id: "call-deny" })
  const asked = yield* h.toolCall({ tool: "curl", args: { url: ArgMarker }, call_id: "call-ask" })
  const rewritten = yield* h.toolCall({ tool: "edit", args: { path: ArgMarker }, call_id: "call-edit" })
  yield* h.toolResult({
    tool: "edit",
    args: { path: ArgMarker },
    content: ContentMarker,
    is_error: false,
    call_id: "call-edit"
  })
  yield* h.context([{ role: "user", content: ContextMarker }])
  return [denied.decision, asked.decision, rewritten.decision, rewritten.rounds] as const
})

const runSession = (telemetry: Telemetry.TelemetrySettings | undefined) => {
  const host = session.pipe(
    Effect.provide(ExtensionHost.layerFake(extensions, { sessionId: "sess-otel" })),
    Effect.provide(AuditLog.layerNone)
  )
  return telemetry === undefined ? host : Effect.provide(host, Telemetry.layer(telemetry))
}

const withReceiver = <A, E>(mode: Mode, f: (r: Receiver) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => startReceiver(mode)),
    f,
    (r) => Effect.promise(() => r.close())
  )

/**
 * Runs `program` on a host over `fakes` exporting to `receiver`, and returns the span id the fiber had as its span
 * each time an extension's death was logged: a logger that links a log line to its span reads it there.
 */
const deathSpanIds = <E>(
  receiver: Receiver,
  fakes: Parameters<typeof ExtensionHost.layerFake>[0],
  program: Effect.Effect<void, E, ExtensionHost>
) =>
  Effect.gen(function* () {
    const seen: Array<string | undefined> = []
    const spanOfDeath = Logger.make((options) => {
      if (String(options.message).includes("is dead")) seen.push(options.fiber.cache.span?.spanId)
    })
    yield* program.pipe(
      Effect.provide(ExtensionHost.layerFake(fakes, { sessionId: "sess-otel" })),
      Effect.provide(AuditLog.layerNone),
      Effect.provide(Telemetry.layer(Telemetry.forEndpoint(receiver.url, { timeoutMillis: within(2000) }))),
      Effect.provide(Logger.layer([spanOfDeath]))
    )
    return seen
  })

/** An attribute of every kind a span can carry: text (not ASCII), integers (negative, past 2^53), double, booleans, list. */
const everyKind = {
  text: "naïve…",
  int: 42,
  negative: -3,
  huge: 2 ** 60,
  double: 1.5,
  yes: true,
  no: false,
  list: ["a", 1]
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

for (const protocol of ["http/protobuf", "http/json"] as const) {
  describe(`OTLP export (${protocol})`, () => {
    it.live(
      "spans with their attributes and links, metrics and log records arrive; no content or args text is sent",
      () =>
        withReceiver("ok", (receiver) =>
          Effect.gen(function* () {
            const decisions = yield* runSession(
              Telemetry.forEndpoint(receiver.url, {
                protocol,
                // A receiver in this process, on a busy machine: a request may take seconds (default bound 2 s).
                timeoutMillis: within(2000),
                headers: { "x-team": "guards" },
                serviceName: "abhed-test"
              })
            )
            assert.deepStrictEqual(decisions, ["deny", "ask", "allow", 2])
            const contentType = protocol === "http/json" ? "application/json" : "application/x-protobuf"
            assert.ok(receiver.received.length > 0)
            for (const r of receiver.received) {
              assert.strictEqual(r.contentType, contentType)
              assert.strictEqual(r.headers["x-team"], "guards")
              const text = r.raw.toString("latin1")
              for (const marker of Markers) assert.notInclude(text, marker, `${marker} sent to ${r.path}`)
              assert.strictEqual(resourceOf(r)["service.name"], "abhed-test")
            }

            const spans = spansOf(receiver.received)
            const byCall = (id: string) => spans.find((s) => s.attributes["gen_ai.tool.call.id"] === id)
            const children = (parent: { spanId: string; traceId: string }) =>
              spans
                .filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId)
                .map((s) => s.attributes)
                .sort(
                  (a, b) =>
                    String(a["abhed.round"]).localeCompare(String(b["abhed.round"])) ||
                    String(a["abhed.extension.name"]).localeCompare(String(b["abhed.extension.name"]))
                )

            const deny = byCall("call-deny")
            assert.ok(deny)
            assert.strictEqual(deny.name, "abhed.tool_call")
            assert.deepInclude(deny.attributes, {
              "abhed.event": "tool_call",
              "gen_ai.conversation.id": "sess-otel",
              "gen_ai.tool.name": "rm",
              "gen_ai.operation.name": "execute_tool",
              "abhed.decision": "deny",
              "abhed.rounds": 1,
              "abhed.args.sha256": sha256(JSON.stringify({ path: ArgMarker })),
              "abhed.args.bytes": JSON.stringify({ path: ArgMarker }).length
            })
            assert.deepStrictEqual(deny.attributes["abhed.deciding_extensions"], ["a-deny"])
            const denyChildren = children(deny)
            assert.deepStrictEqual(
              denyChildren.map((c) => [
                c["abhed.extension.name"],
                c["abhed.round"],
                c["abhed.extension.status"],
                c["abhed.extension.verdict"]
              ]),
              [
                ["a-deny", 1, "replied", "deny"],
                ["b-ask", 1, "replied", "none"],
                ["c-rewrite", 1, "replied", "none"],
                ["d-dead", 1, "exited", undefined]
              ]
            )
            assert.strictEqual(denyChildren[0]?.["abhed.extension.reason"], "rm is not allowed")
            assert.strictEqual(denyChildren[3]?.["abhed.extension.error"], "exited (code 3)")
            assert.strictEqual(denyChildren[3]?.["abhed.extension.on_failure"], "ignore")
            for (const c of denyChildren) assert.strictEqual(typeof c["abhed.extension.latency_ms"], "number")

            const ask = byCall("call-ask")
            assert.ok(ask)
            assert.strictEqual(ask.attributes["abhed.decision"], "ask")
            assert.deepStrictEqual(ask.attributes["abhed.deciding_extensions"], ["b-ask"])
            // Found dead by the later request: its status says so.
            assert.strictEqual(
              children(ask).find((c) => c["abhed.extension.name"] === "d-dead")?.["abhed.extension.status"],
              "dead"
            )

            const edit = byCall("call-edit")
            assert.ok(edit)
            assert.strictEqual(edit.attributes["abhed.rounds"], 2)
            assert.deepStrictEqual(edit.attributes["abhed.rewriting_extensions"], ["c-rewrite"])
            const editChildren = children(edit).filter((c) => c["abhed.extension.name"] === "c-rewrite")
            assert.deepStrictEqual(
              editChildren.map((c) => [c["abhed.round"], c["abhed.extension.verdict"]]),
              [
                [1, "rewrite"],
                [2, "none"]
              ]
            )

            assert.deepStrictEqual(
              spans
                .filter((s) => s.parentSpanId === undefined || !spans.some((p) => p.spanId === s.parentSpanId))
                .map((s) => s.name)
                .sort(),
              [
                "abhed.context",
                "abhed.list_tools",
                "abhed.session_end",
                "abhed.session_start",
                "abhed.tool_call",
                "abhed.tool_call",
                "abhed.tool_call",
                "abhed.tool_result"
              ]
            )
            // A child lies within its dispatch.
            for (const s of spans.filter((x) => x.name === "abhed.extension")) {
              const parent = spans.find((p) => p.spanId === s.parentSpanId)
              assert.ok(parent !== undefined && s.start >= parent.start && s.end <= parent.end)
            }

            const logs = logsOf(receiver.received)
            assert.strictEqual(logs.length, 8)
            const denyLog = logs.find((l) => l.attributes["gen_ai.tool.call.id"] === "call-deny")
            assert.ok(denyLog)
            assert.strictEqual(denyLog.attributes["event.name"], "abhed.audit")
            assert.strictEqual(denyLog.spanId, deny.spanId)
            assert.strictEqual(denyLog.traceId, deny.traceId)
            const body = JSON.parse(String(denyLog.body))
            assert.deepInclude(body, { event: "tool_call", tool: "rm", decision: "deny", session_id: "sess-otel" })
            assert.deepStrictEqual(body.reasons, [{ extension: "a-deny", reason: "rm is not allowed" }])

            const metrics = metricsOf(receiver.received)
            const point = (name: string, attrs: Record<string, unknown>) =>
              metrics.filter((m) => m.name === name && Object.entries(attrs).every(([k, v]) => m.attributes[k] === v))
            assert.ok(
              point("abhed_decisions_total", { event: "tool_call", decision: "deny", extension: "a-deny" }).some(
                (m) => m.value >= 1
              )
            )
            assert.ok(
              point("abhed_decisions_total", { event: "tool_call", decision: "ask", extension: "b-ask" }).some(
                (m) => m.value >= 1
              )
            )
            assert.ok(point("abhed_extension_latency", { extension: "c-rewrite" }).some((m) => m.value >= 1))
            assert.ok(point("abhed_dispatch_latency", { event: "tool_call" }).some((m) => m.value >= 3))
            assert.ok(point("abhed_extension_deaths_total", { cause: "exited" }).some((m) => m.value >= 1))
          })
        )
    )

    it.live("args verbatim only when the operator opts in", () =>
      withReceiver("ok", (receiver) =>
        Effect.gen(function* () {
          yield* runSession(
            Telemetry.forEndpoint(receiver.url, { protocol, args: "full", timeoutMillis: within(2000) })
          )
          const deny = spansOf(receiver.received).find((s) => s.attributes["gen_ai.tool.call.id"] === "call-deny")
          assert.strictEqual(deny?.attributes["gen_ai.tool.call.arguments"], JSON.stringify({ path: ArgMarker }))
          // Content still never leaves.
          for (const r of receiver.received) {
            for (const marker of [ContentMarker, ContextMarker, RedactMarker])
              assert.notInclude(r.raw.toString("latin1"), marker)
          }
        })
      )
    )

    for (const mode of ["fail", "hang"] as const) {
      it.live(
        `a collector that ${mode === "fail" ? "answers 500" : "never answers"} changes no decision; the end waits one bound; drops are counted`,
        () =>
          withReceiver(mode, (receiver) =>
            Effect.gen(function* () {
              const dropped = Metric.withAttributes(HostMetrics.telemetryDropped, { signal: "traces" })
              const before = (yield* Metric.value(dropped)).count
              const plain = yield* runSession(undefined)
              const started = Date.now()
              // Small batches, so that export requests go out (and hang or fail) while the session runs.
              const exported = yield* runSession(
                Telemetry.forEndpoint(receiver.url, {
                  protocol,
                  timeoutMillis: 1000,
                  maxBatchSize: 2,
                  intervalMillis: 50
                })
              )
              const elapsed = Date.now() - started
              assert.deepStrictEqual(exported, plain)
              assert.isBelow(elapsed, within(1000))
              assert.ok(receiver.received.length > 0)
              assert.isAbove((yield* Metric.value(dropped)).count, before)
            })
          )
      )
    }
  })
}

describe("OTLP export: what the fiber asks of a dispatch's span", () => {
  // A dispatch's root span is made without effect's `useSpan` when nothing asks for more: what does ask must still
  // reach the span (the environment's span annotations), and a dispatch under an exported span is its child.
  it.live("span annotations from the environment, and an exported parent span, reach the dispatch's span", () =>
    withReceiver("ok", (receiver) =>
      Effect.gen(function* () {
        const outer = yield* Effect.gen(function* () {
          yield* Effect.annotateSpans(session, "deployment.ring", "canary")
          const h = yield* ExtensionHost
          return yield* Effect.withSpan(
            Effect.andThen(h.toolCall({ tool: "ls", args: {}, call_id: "call-under" }), Effect.currentSpan),
            "agent.turn"
          )
        }).pipe(
          Effect.provide(ExtensionHost.layerFake(extensions, { sessionId: "sess-otel" })),
          Effect.provide(AuditLog.layerNone),
          Effect.provide(Telemetry.layer(Telemetry.forEndpoint(receiver.url, { timeoutMillis: within(2000) })))
        )
        const spans = spansOf(receiver.received)
        const deny = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === "call-deny")
        assert.strictEqual(deny?.attributes["deployment.ring"], "canary")
        assert.strictEqual(deny?.attributes["abhed.decision"], "deny")
        assert.strictEqual(deny?.parentSpanId, undefined)
        const under = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === "call-under")
        assert.strictEqual(under?.attributes["deployment.ring"], undefined)
        assert.strictEqual(under?.parentSpanId, outer.spanId)
        assert.strictEqual(under?.traceId, outer.traceId.padStart(32, "0"))
      })
    )
  )

  it.live("an extension's death warning is logged in its dispatch's span, for a logger that links the two", () =>
    withReceiver("ok", (receiver) =>
      Effect.gen(function* () {
        const seen = yield* deathSpanIds(
          receiver,
          extensions,
          Effect.gen(function* () {
            const h = yield* ExtensionHost
            yield* h.toolCall({ tool: "rm", args: {}, call_id: "call-deny" })
          })
        )
        const deny = spansOf(receiver.received).find((s) => s.attributes["gen_ai.tool.call.id"] === "call-deny")
        assert.ok(deny)
        assert.deepStrictEqual(seen, [deny.spanId])
      })
    )
  )

  // One extension still busy with an earlier dispatch cannot begin now: the round forks a fiber per exchange, and
  // a death seen in one of them is logged in that fiber, which must see the dispatch's span as its parent too.
  it.live("a death seen in an exchange forked into a fiber of its own is logged in its dispatch's span", () =>
    withReceiver("ok", (receiver) =>
      Effect.gen(function* () {
        const holding = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const dying = yield* Deferred.make<void>()
        const forked = [
          FakeExtension.make("a-hold", (r) =>
            r.event === "tool_call" && r.tool === "hold"
              ? Effect.andThen(Deferred.succeed(holding, undefined), Effect.as(Deferred.await(release), {}))
              : Effect.succeed({})
          ),
          FakeExtension.make("b-dies", (r) =>
            r.event === "tool_call" && r.tool === "rm"
              ? Effect.andThen(Deferred.succeed(dying, undefined), Effect.fail(FakeExtension.FakeExit.code(3)))
              : Effect.succeed({})
          )
        ]
        const seen = yield* deathSpanIds(
          receiver,
          forked,
          Effect.gen(function* () {
            const h = yield* ExtensionHost
            const held = yield* Effect.forkChild(h.toolCall({ tool: "hold", args: {}, call_id: "call-hold" }))
            yield* Deferred.await(holding)
            // a-hold's permit is taken: this dispatch's round cannot begin its exchanges at once.
            const dies = yield* Effect.forkChild(h.toolCall({ tool: "rm", args: {}, call_id: "call-forked" }))
            yield* Deferred.await(dying)
            yield* Deferred.succeed(release, undefined)
            yield* Fiber.join(held)
            yield* Fiber.join(dies)
          })
        )
        const dispatch = spansOf(receiver.received).find((s) => s.attributes["gen_ai.tool.call.id"] === "call-forked")
        assert.ok(dispatch)
        assert.deepStrictEqual(seen, [dispatch.spanId])
      })
    )
  )
})

for (const protocol of ["http/protobuf", "http/json"] as const) {
  // The exporter writes spans straight from the tracer's own (protobuf) or through effect's OTLP shapes (JSON): both
  // as effect's OTLP tracer writes a span, read back with the published definitions.
  describe(`OTLP export (${protocol}): a span's end, links and attribute values`, () => {
    it.live("a failure, an interruption, a link and every kind of attribute value arrive as written", () =>
      withReceiver("ok", (receiver) =>
        Effect.gen(function* () {
          const linked = yield* Effect.gen(function* () {
            yield* Effect.exit(Effect.withSpan(Effect.fail(new Error("boom")), "fails"))
            yield* Effect.exit(Effect.withSpan(Effect.interrupt, "interrupted"))
            const target = yield* Effect.withSpan(Effect.currentSpan, "target")
            yield* Effect.withSpan(Effect.annotateCurrentSpan(everyKind), "linked", {
              links: [{ span: target, attributes: { "link.kind": "follows" } }]
            })
            return target
          }).pipe(
            Effect.provide(
              Telemetry.layer(Telemetry.forEndpoint(receiver.url, { protocol, timeoutMillis: within(2000) }))
            )
          )
          const spans = spansOf(receiver.received)
          const named = (name: string) => spans.find((s) => s.name === name)
          const fails = named("fails")
          assert.deepStrictEqual(fails?.status, { code: 2, message: "boom" })
          assert.deepStrictEqual(fails?.events, [
            { name: "exception", attributes: { "exception.type": "Error", "exception.message": "boom" } }
          ])
          const interrupted = named("interrupted")
          assert.deepStrictEqual(interrupted?.status, { code: 0, message: undefined })
          assert.strictEqual(interrupted?.attributes["effect.fiber.interrupted"], true)
          const link = named("linked")
          assert.deepStrictEqual(link?.status, { code: 1, message: undefined })
          assert.deepStrictEqual(link?.links, [
            {
              traceId: linked.traceId.padStart(32, "0"),
              spanId: linked.spanId,
              attributes: { "link.kind": "follows" }
            }
          ])
          assert.deepStrictEqual(link?.attributes, everyKind)
        })
      )
    )
  })
}
