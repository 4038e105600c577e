import { Telemetry } from "@abhed/host"
import * as TelemetryConfig from "@abhed/host/TelemetryConfig"
import * as TelemetryExport from "@abhed/host/TelemetryExport"
import { assert, describe, it } from "@effect/vitest"

/** The standard OpenTelemetry variables, read as the OTLP exporter specification says; bad values are warnings. */
describe("Telemetry.fromEnv", () => {
  it("no endpoint, or OTEL_SDK_DISABLED=true: nothing to export", () => {
    assert.isUndefined(Telemetry.fromEnv({}).settings)
    const disabled = Telemetry.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "TRUE" })
    assert.isUndefined(disabled.settings)
    assert.deepStrictEqual(disabled.warnings, [])
  })

  it("the base endpoint gets each signal's path; a signal's own endpoint is used as given", () => {
    const { settings, warnings } = Telemetry.fromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/otlp/",
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "https://logs.example/ingest"
    })
    assert.deepStrictEqual(warnings, [])
    assert.deepStrictEqual(settings?.endpoints, {
      traces: "http://collector:4318/otlp/v1/traces",
      metrics: "http://collector:4318/otlp/v1/metrics",
      logs: "https://logs.example/ingest"
    })
    assert.deepStrictEqual(settings?.protocol, {
      traces: "http/protobuf",
      metrics: "http/protobuf",
      logs: "http/protobuf"
    })
    assert.strictEqual(settings?.serviceName, "abhed")
    assert.strictEqual(settings?.args, "digest")
  })

  it("only a signal's own endpoint: only that signal", () => {
    const { settings } = Telemetry.fromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" })
    assert.deepStrictEqual(settings?.endpoints, { traces: "http://c:4318/v1/traces" })
  })

  it("protocol, headers, service name, resource attributes, timeout, args opt-in", () => {
    const { settings, warnings } = Telemetry.fromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc, x-team = guards",
      OTEL_SERVICE_NAME: "agent-fleet",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=ignored",
      OTEL_EXPORTER_OTLP_TIMEOUT: "750",
      ABHED_OTEL_ARGS: "full"
    })
    assert.deepStrictEqual(warnings, [])
    assert.deepStrictEqual(settings?.protocol, { traces: "http/json", metrics: "http/protobuf", logs: "http/json" })
    assert.deepStrictEqual(settings?.headers, { authorization: "Bearer abc", "x-team": "guards" })
    assert.strictEqual(settings?.serviceName, "agent-fleet")
    assert.deepStrictEqual(settings?.resourceAttributes, {
      "deployment.environment": "prod",
      "service.name": "ignored"
    })
    assert.strictEqual(settings?.timeoutMillis, 750)
    assert.strictEqual(settings?.args, "full")
  })

  it("each bad value is a warning naming the variable, and what is done instead", () => {
    const { settings, warnings } = Telemetry.fromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "ftp://c/traces",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_EXPORTER_OTLP_HEADERS: "Bearer s3cr3t,k=%E0%A4%A",
      OTEL_EXPORTER_OTLP_TIMEOUT: "soon",
      OTEL_SDK_DISABLED: "yes",
      ABHED_OTEL_ARGS: "all"
    })
    assert.deepStrictEqual(warnings, [
      'OTEL_SDK_DISABLED: "yes" is neither true nor false: telemetry stays on',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "ftp://c/traces" is not an http(s) URL: traces not exported',
      'OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported (http/protobuf, http/json): using http/protobuf',
      // A header may be a credential: named by its position, never echoed.
      "OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not key=value: skipped",
      'OTEL_EXPORTER_OTLP_HEADERS: entry "k" is not validly percent-encoded: skipped',
      'ABHED_OTEL_ARGS: "all" is neither digest nor full: using digest',
      'OTEL_EXPORTER_OTLP_TIMEOUT: "soon" is not a positive integer: using 2000'
    ])
    assert.deepStrictEqual(settings?.endpoints, { metrics: "http://c:4318/v1/metrics", logs: "http://c:4318/v1/logs" })
    assert.deepStrictEqual(settings?.headers, {})
  })
})

describe("Telemetry.fromEnv: what would otherwise fail every request, or show a secret", () => {
  it("a header HTTP cannot carry (a line break once decoded, a name that is no token) is a warning at the start, its value never shown", () => {
    const { settings, warnings } = Telemetry.fromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS:
        "authorization=Bearer%20s3cr3t%0D%0Ax-injected%3A%201,api key=s3cr3t,x-team=guards,x-name=caf%C3%A9%E2%82%AC"
    })
    assert.deepStrictEqual(warnings, [
      'OTEL_EXPORTER_OTLP_HEADERS: entry "authorization" holds what a header cannot (a line break, a control character, a character past U+00FF): skipped',
      "OTEL_EXPORTER_OTLP_HEADERS: entry 2 does not start with a valid header name: skipped",
      'OTEL_EXPORTER_OTLP_HEADERS: entry "x-name" holds what a header cannot (a line break, a control character, a character past U+00FF): skipped'
    ])
    for (const w of warnings) assert.notInclude(w, "s3cr3t")
    assert.deepStrictEqual(settings?.headers, { "x-team": "guards" })
  })

  it("a signal's own headers (OTEL_EXPORTER_OTLP_TRACES_HEADERS, ...) go over the common ones, for that signal alone", () => {
    const { settings, warnings } = Telemetry.fromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "x-team=guards,authorization=Bearer%20common",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "authorization=Bearer%20traces",
      OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x-logs=1,Bearer oops"
    })
    assert.deepStrictEqual(warnings, ["OTEL_EXPORTER_OTLP_LOGS_HEADERS: entry 2 is not key=value: skipped"])
    assert.ok(settings !== undefined)
    assert.deepStrictEqual(TelemetryConfig.headersOf(settings, "traces"), {
      "x-team": "guards",
      authorization: "Bearer traces"
    })
    assert.deepStrictEqual(TelemetryConfig.headersOf(settings, "metrics"), {
      "x-team": "guards",
      authorization: "Bearer common"
    })
    assert.deepStrictEqual(TelemetryConfig.headersOf(settings, "logs"), {
      "x-team": "guards",
      authorization: "Bearer common",
      "x-logs": "1"
    })
  })

  it("an endpoint that is no http(s) URL is named without its password or query", () => {
    const { settings, warnings } = Telemetry.fromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "htps://fleet:s3cr3t@c.example/v1/traces?api_key=s3cr3t"
    })
    assert.isUndefined(settings)
    assert.deepStrictEqual(warnings, [
      'OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" is not an http(s) URL: ignored',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "htps://…@c.example/v1/traces?…" is not an http(s) URL: traces not exported'
    ])
  })

  it("OTEL_TRACES_EXPORTER and its kin: none (or an exporter not supported) keeps that signal home", () => {
    const { settings, warnings } = Telemetry.fromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_LOGS_EXPORTER: " None ",
      OTEL_METRICS_EXPORTER: "prometheus",
      OTEL_TRACES_EXPORTER: "console,otlp"
    })
    assert.deepStrictEqual(warnings, [
      'OTEL_TRACES_EXPORTER: "console" not supported (otlp, none): traces exported over OTLP alone',
      'OTEL_METRICS_EXPORTER: "prometheus" not supported (otlp, none): metrics not exported'
    ])
    assert.deepStrictEqual(settings?.endpoints, { traces: "http://c:4318/v1/traces" })
    const none = { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none", OTEL_LOGS_EXPORTER: "none" }
    assert.isUndefined(Telemetry.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", ...none }).settings)
  })

  it("a standard variable this exporter does not support is a warning that says what happens instead, once something is exported", () => {
    const env = {
      OTEL_EXPORTER_OTLP_CERTIFICATE: "/etc/ca.pem",
      OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: "/etc/key.pem",
      OTEL_EXPORTER_OTLP_COMPRESSION: "gzip",
      OTEL_EXPORTER_OTLP_LOGS_COMPRESSION: "none",
      OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: "500"
    }
    assert.deepStrictEqual(Telemetry.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", ...env }).warnings, [
      "OTEL_EXPORTER_OTLP_CERTIFICATE: not supported: the system's CAs verify the collector (a private CA: NODE_EXTRA_CA_CERTS=FILE)",
      "OTEL_EXPORTER_OTLP_COMPRESSION: not supported: requests are sent uncompressed",
      "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: not supported: no client certificate is sent",
      "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: not supported per signal: OTEL_EXPORTER_OTLP_TIMEOUT bounds every request"
    ])
    // Nothing exported (another program's variables in the shell): nothing to say.
    assert.deepStrictEqual(Telemetry.fromEnv(env).warnings, [])
  })

  it("whitespace around values and entries, OTEL_SDK_DISABLED in any case, OTEL_SERVICE_NAME over service.name", () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "  https://c.example:4318/  ",
      OTEL_EXPORTER_OTLP_HEADERS: " x-team = guards , ",
      OTEL_RESOURCE_ATTRIBUTES: " service.name = from-attrs , team = a%2Cb ",
      OTEL_SERVICE_NAME: " "
    }
    const { settings, warnings } = Telemetry.fromEnv(env)
    assert.deepStrictEqual(warnings, [])
    assert.strictEqual(settings?.endpoints.traces, "https://c.example:4318/v1/traces")
    assert.deepStrictEqual(settings?.headers, { "x-team": "guards" })
    // An empty OTEL_SERVICE_NAME is unset: service.name from the attributes.
    assert.strictEqual(settings?.serviceName, "from-attrs")
    assert.strictEqual(settings?.resourceAttributes["team"], "a,b")
    assert.strictEqual(Telemetry.fromEnv({ ...env, OTEL_SERVICE_NAME: "svc" }).settings?.serviceName, "svc")
    assert.isUndefined(Telemetry.fromEnv({ ...env, OTEL_SDK_DISABLED: " True " }).settings)
  })
})

describe("the export buffer", () => {
  it("holds at most its cap; the next item is dropped and counted; what the exporter takes frees room", async () => {
    const stats = TelemetryExport.makeStats()
    const buffer = TelemetryExport.boundedBuffer<number>("traces", 4, stats)
    const handed: Array<unknown> = []
    buffer.connect((item) => handed.push(item))
    for (let i = 1; i <= 5; i++) buffer.push(i)
    assert.strictEqual(stats.dropped.traces, 1)
    // Handed over in a turn of the event loop of their own, never inside the push.
    assert.deepStrictEqual(handed, [])
    await new Promise<void>((resolve) => setImmediate(resolve))
    assert.deepStrictEqual(handed, [1, 2, 3, 4])
    buffer.taken(4)
    buffer.push(6)
    assert.strictEqual(stats.dropped.traces, 1)
  })

  it("given the exporter's batch size, hands items straight to it until one would fill its batch", async () => {
    const stats = TelemetryExport.makeStats()
    const buffer = TelemetryExport.boundedBuffer<number>("traces", 8, stats)
    const handed: Array<unknown> = []
    buffer.connect((item) => handed.push(item), 3)
    buffer.push(1)
    buffer.push(2)
    assert.deepStrictEqual(handed, [1, 2])
    // The third would fill the exporter's batch (it would serialize and send in the pusher's fiber): a turn of its own,
    // and what comes meanwhile keeps its order behind it.
    buffer.push(3)
    buffer.push(4)
    assert.deepStrictEqual(handed, [1, 2])
    await new Promise<void>((resolve) => setImmediate(resolve))
    assert.deepStrictEqual(handed, [1, 2, 3, 4])
    // The exporter took its four: the next go straight again.
    buffer.taken(4)
    buffer.push(5)
    assert.deepStrictEqual(handed, [1, 2, 3, 4, 5])
    assert.strictEqual(stats.dropped.traces, 0)
  })
})
