import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { repoRoot, runCli } from "../support/cli-helpers.ts"
import { within } from "../support/extension-helpers.ts"
import { logsOf, resourceOf, spansOf, startReceiver } from "../support/otel-receiver.ts"

/** `abhed-ext run` exports when the standard variables name a collector, and a collector never holds it up. */
const args = ["run", "--config", `${repoRoot}test/fixtures/cli-guard.json`]
const input = [
  { event: "tool_call", tool: "read", args: { path: "app/.secret" } },
  { event: "tool_call", tool: "read", args: { path: "README.md" } }
]
  .map((l) => JSON.stringify(l))
  .join("\n")
const noOtel = { OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_SDK_DISABLED: "" }

const timed = async (env: NodeJS.ProcessEnv) => {
  const started = Date.now()
  const result = await runCli(args, { input, env: { ...noOtel, ...env } })
  return { ...result, elapsed: Date.now() - started }
}

describe("abhed-ext run with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("exports the session's spans and records, the decisions unchanged", async () => {
    const receiver = await startReceiver("ok")
    try {
      const plain = await timed({})
      const exported = await timed({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "abhed-ci",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test"
      })
      assert.strictEqual(exported.code, 0, exported.stderr)
      assert.strictEqual(exported.stdout, plain.stdout)
      const spans = spansOf(receiver.received)
      assert.ok(spans.some((s) => s.name === "abhed.tool_call" && s.attributes["abhed.decision"] === "deny"))
      assert.ok(spans.some((s) => s.name === "abhed.extension"))
      assert.ok(logsOf(receiver.received).length > 0)
      const traces = receiver.received.find((r) => r.path === "/v1/traces")
      assert.ok(traces)
      assert.deepInclude(resourceOf(traces), { "service.name": "abhed-ci", "deployment.environment": "test" })
      // Each dispatch a trace of its own, whose root was sent: none under the command's own (never sent) span.
      const dispatches = spans.filter((s) => s.name !== "abhed.extension")
      for (const s of dispatches) assert.strictEqual(s.parentSpanId, undefined, `${s.name} has a parent`)
      assert.strictEqual(new Set(dispatches.map((s) => s.traceId)).size, dispatches.length)
    } finally {
      await receiver.close()
    }
  })

  it("with an audit file too: each dispatch's span, tagged with its record, and its log record; no warning", async () => {
    const receiver = await startReceiver("ok")
    try {
      const audit = join(mkdtempSync(join(tmpdir(), "abhed-otel-audit-")), "audit.jsonl")
      const result = await runCli([...args, "--audit", audit], {
        input,
        env: { ...noOtel, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }
      })
      assert.strictEqual(result.code, 0, result.stderr)
      // A collector that took everything: nothing to warn about.
      assert.notInclude(result.stderr, "telemetry")
      const records = readFileSync(audit, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { readonly event: string; readonly seq: number })
      const dispatches = spansOf(receiver.received).filter((s) => s.name !== "abhed.extension")
      // Each span has its own record's attributes (tagged before it ended, after the decision).
      assert.deepStrictEqual(
        dispatches.map((s) => `${s.name} ${String(s.attributes["abhed.seq"])}`).sort(),
        records.map((r) => `abhed.${r.event} ${r.seq}`).sort()
      )
      assert.strictEqual(logsOf(receiver.received).length, records.length)
    } finally {
      await receiver.close()
    }
  })

  const misbehaving = {
    hang: "never answers",
    fail: "answers 500",
    reset: "resets the connection",
    drip: "drips its answer a byte at a time"
  } as const
  for (const mode of ["hang", "fail", "reset", "drip"] as const) {
    it(`a collector that ${misbehaving[mode]}: same output, exit 0, within the timeout, one warning`, async () => {
      const receiver = await startReceiver(mode)
      try {
        const plain = await timed({})
        const exported = await timed({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_TIMEOUT: "500" })
        assert.strictEqual(exported.code, 0, exported.stderr)
        assert.strictEqual(exported.stdout, plain.stdout)
        assert.ok(receiver.attempts.length > 0)
        assert.strictEqual(exported.stderr.split("telemetry").length - 1, 1, exported.stderr)
        assert.include(exported.stderr, "telemetry: not exported")
        assert.isBelow(exported.elapsed, plain.elapsed + within(500))
      } finally {
        await receiver.close()
      }
    })
  }

  it("a bad value is a warning naming the variable; the run goes on", async () => {
    const result = await timed({
      OTEL_EXPORTER_OTLP_ENDPOINT: "not a url",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_SDK_DISABLED: "maybe"
    })
    assert.strictEqual(result.code, 0, result.stderr)
    assert.include(
      result.stderr,
      'abhed-ext run: warning: OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" is not an http(s) URL'
    )
    assert.include(result.stderr, 'OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported (http/protobuf, http/json)')
    assert.include(result.stderr, 'OTEL_SDK_DISABLED: "maybe" is neither true nor false')
  })

  it("OTEL_SDK_DISABLED=true: nothing is sent", async () => {
    const receiver = await startReceiver("ok")
    try {
      const result = await timed({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: "true" })
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(receiver.received.length, 0)
    } finally {
      await receiver.close()
    }
  })
})
