import { Duration } from "effect"
import { assert, describe, it } from "vitest"
import * as HookTelemetry from "../../packages/cli/src/hook/HookTelemetry.ts"
import { repoRoot, runCli } from "../support/cli-helpers.ts"
import { within } from "../support/extension-helpers.ts"
import { logsOf, metricsOf, resourceOf, spansOf, startReceiver } from "../support/otel-receiver.ts"

/**
 * `abhed-ext hook` exports each run of its hook (docs/observability.md) with the variables `run` reads: a span, the
 * run's metrics and a log record, none of them with the call's args, the tool's output, the hook's arguments or its
 * environment; and a collector that never answers changes no answer and holds the exit at most its timeout.
 */
const ArgMarker = "ARG-MARKER-3b1d"
const ContentMarker = "CONTENT-MARKER-77e0"
const HookArgMarker = "HOOKARG-MARKER-c9a4"
const EnvMarker = "ENV-MARKER-15f2"
const Markers = [ArgMarker, ContentMarker, HookArgMarker, EnvMarker]

const hookArgs = [
  "hook",
  "--format",
  "claude",
  "--timeout-ms",
  "20000",
  "--",
  "bash",
  `${repoRoot}test/fixtures/hooks/otel_guard.sh`,
  HookArgMarker
]
const request = (id: number, fields: Record<string, unknown>) =>
  JSON.stringify({ id, session_id: "sess-hook", round: 1, ...fields })
const input = `${[
  request(1, { event: "tool_call", call_id: "call-rm", tool: "bash", args: { command: `rm -rf ${ArgMarker}` } }),
  request(2, { event: "tool_call", call_id: "call-ls", tool: "bash", args: { command: `ls ${ArgMarker}` } }),
  request(3, {
    event: "tool_result",
    call_id: "call-ls",
    tool: "bash",
    args: { command: `ls ${ArgMarker}` },
    content: ContentMarker,
    is_error: false
  })
].join("\n")}\n`
const noOtel = { OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_SDK_DISABLED: "", HOOK_SECRET: EnvMarker }

const timed = async (env: NodeJS.ProcessEnv) => {
  const started = Date.now()
  const result = await runCli(hookArgs, { input, env: { ...noOtel, ...env } })
  return { ...result, elapsed: Date.now() - started }
}

/**
 * The same run without telemetry, for the export tests, which compare its answers only: one run for both. (The
 * collector tests compare times too: each makes its own, next to the run it is compared with.)
 */
let plainRun: ReturnType<typeof timed> | undefined
const plain = () => {
  plainRun ??= timed({})
  return plainRun
}

describe("abhed-ext hook with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  for (const protocol of ["http/protobuf", "http/json"] as const) {
    it.concurrent(`exports a span, metrics and a log record per run of the hook (${protocol}); no content, args or env`, async () => {
      const receiver = await startReceiver("ok")
      try {
        const without = await plain()
        const exported = await timed({
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_SERVICE_NAME: "abhed-hooks"
        })
        assert.strictEqual(exported.code, 0, exported.stderr)
        assert.strictEqual(exported.stdout, without.stdout)
        assert.include(exported.stdout, "rm is not allowed")
        for (const r of receiver.received) {
          const text = r.raw.toString("latin1")
          for (const marker of Markers) assert.notInclude(text, marker, `${marker} sent to ${r.path}`)
        }
        const spans = spansOf(receiver.received).filter((s) => s.name === "abhed.hook")
        assert.strictEqual(spans.length, 3)
        const rm = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === "call-rm")
        assert.ok(rm)
        assert.deepInclude(rm.attributes, {
          "abhed.event": "tool_call",
          "abhed.hook.event": "PreToolUse",
          "abhed.hook.format": "claude",
          "abhed.hook.command": "bash",
          "gen_ai.conversation.id": "sess-hook",
          "gen_ai.tool.name": "bash",
          "abhed.hook.tool": "Bash",
          "abhed.round": 1,
          "abhed.hook.status": "exited",
          "abhed.hook.exit_code": 2,
          "abhed.hook.decision": "deny",
          "abhed.hook.reason": "rm is not allowed"
        })
        assert.strictEqual(typeof rm.attributes["abhed.hook.latency_ms"], "number")
        assert.ok(rm.end > rm.start)
        // Each run a trace of its own.
        assert.strictEqual(rm.parentSpanId, undefined)
        assert.strictEqual(new Set(spans.map((s) => s.traceId)).size, 3)
        const ls = spans.find(
          (s) => s.attributes["gen_ai.tool.call.id"] === "call-ls" && s.attributes["abhed.event"] === "tool_call"
        )
        assert.deepInclude(ls?.attributes, { "abhed.hook.exit_code": 0, "abhed.hook.decision": "none" })
        const after = spans.find((s) => s.attributes["abhed.event"] === "tool_result")
        assert.strictEqual(after?.attributes["abhed.hook.event"], "PostToolUse")

        const logs = logsOf(receiver.received).filter((l) => l.attributes["event.name"] === "abhed.hook")
        assert.strictEqual(logs.length, 3)
        const rmLog = logs.find((l) => l.attributes["gen_ai.tool.call.id"] === "call-rm")
        assert.strictEqual(rmLog?.spanId, rm.spanId)
        assert.strictEqual(rmLog?.traceId, rm.traceId)
        assert.deepInclude(JSON.parse(String(rmLog?.body)), {
          "abhed.hook.decision": "deny",
          "abhed.hook.exit_code": 2
        })

        const runs = metricsOf(receiver.received).filter((m) => m.name === "abhed_hook_runs_total")
        assert.ok(
          runs.some(
            (m) =>
              m.attributes["decision"] === "deny" &&
              m.attributes["event"] === "tool_call" &&
              m.attributes["hook"] === "bash" &&
              m.value === 1
          )
        )
        assert.ok(metricsOf(receiver.received).some((m) => m.name === "abhed_hook_latency" && m.value > 0))
        const traces = receiver.received.find((r) => r.path === "/v1/traces")
        assert.ok(traces)
        assert.strictEqual(resourceOf(traces)["service.name"], "abhed-hooks")
      } finally {
        await receiver.close()
      }
    })
  }

  for (const mode of ["hang", "fail", "down"] as const) {
    const what = { hang: "never answers", fail: "answers 500", down: "is not there" }[mode]
    it(`a collector that ${what}: the same answers, exit 0, within the timeout`, async () => {
      const receiver = await startReceiver(mode === "down" ? "ok" : mode)
      // Down: a port that was just listening, now refusing.
      if (mode === "down") await receiver.close()
      try {
        const without = await timed({})
        const exported = await timed({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_TIMEOUT: "500" })
        assert.strictEqual(exported.code, 0, exported.stderr)
        assert.strictEqual(exported.stdout, without.stdout)
        if (mode !== "down") assert.ok(receiver.attempts.length > 0)
        assert.include(exported.stderr, "telemetry: not exported")
        assert.isBelow(exported.elapsed, without.elapsed + within(500))
      } finally {
        if (mode !== "down") await receiver.close()
      }
    })
  }

  it("the names the agent chose (tool, call id, session id) are bounded as the host's spans bound them", () => {
    const huge = (c: string) => c.repeat(100_000)
    const attributes = HookTelemetry.runAttributes(
      {
        request: { event: "tool_call", session_id: huge("s") },
        event: "tool_call",
        tool: { callId: huge("c"), tool: huge("t"), peerTool: huge("p"), args: {}, content: "", isError: false },
        result: { _tag: "Exited", code: 0, stdout: "", stderr: "" },
        reply: {},
        took: Duration.millis(3)
      },
      "bash",
      "claude"
    )
    for (const [key, c] of [
      ["gen_ai.conversation.id", "s"],
      ["gen_ai.tool.call.id", "c"],
      ["gen_ai.tool.name", "t"],
      ["abhed.hook.tool", "p"]
    ] as const)
      assert.strictEqual(attributes[key], `${c.repeat(255)}…`, key)
  })

  it("a hook's reason leaves without what it quotes of the call's args or the tool's output", () => {
    const attributes = (request: Record<string, unknown>, reason: string) =>
      HookTelemetry.runAttributes(
        {
          request,
          event: String(request["event"]) as "tool_call",
          tool: undefined,
          result: { _tag: "Exited", code: 2, stdout: "", stderr: reason },
          reply: { block: true, reason },
          took: Duration.millis(3)
        },
        "bash",
        "claude"
      )["abhed.hook.reason"]
    const call = { event: "tool_call", session_id: "s", args: { command: `cd /repo && rm -rf ${ArgMarker}` } }
    assert.strictEqual(attributes(call, `blocked: rm -rf ${ArgMarker}`), "blocked:[…]")
    const result = { event: "tool_result", session_id: "s", content: `line one\nkey=${ContentMarker}\n` }
    assert.strictEqual(
      attributes(result, `the output holds key=${ContentMarker}, hidden`),
      "the output holds […], hidden"
    )
  })

  it("a failed run is recorded as decision failed, its reason the reply's failed (not a rewrite without one)", () => {
    const attributes = HookTelemetry.runAttributes(
      {
        request: { event: "tool_call", session_id: "s", args: { command: `ls ${ArgMarker}` } },
        event: "tool_call",
        tool: undefined,
        result: { _tag: "Exited", code: 1, stdout: "", stderr: "boom" },
        reply: { failed: "hook failed: exit 1: boom" },
        took: Duration.millis(3)
      },
      "bash",
      "claude"
    )
    assert.strictEqual(attributes["abhed.hook.decision"], "failed")
    assert.strictEqual(attributes["abhed.hook.reason"], "hook failed: exit 1: boom")
  })

  it("a run telemetry cannot record is lost to it alone: the answer never waits on it or fails with it", () => {
    const telemetry = HookTelemetry.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" }, "bash", "claude")
    // A latency no span can hold (its end time would be no number): nothing thrown into the adapter's answer.
    assert.doesNotThrow(() =>
      telemetry.observe({
        request: { event: "tool_call", session_id: "s" },
        event: "tool_call",
        tool: undefined,
        result: { _tag: "Exited", code: 0, stdout: "", stderr: "" },
        reply: {},
        took: Duration.infinity
      })
    )
  })
})
