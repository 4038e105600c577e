import { createRequire } from "node:module"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A local OTLP/HTTP receiver for the telemetry tests: keeps every request's raw bytes, and decodes them, JSON as
 * JSON and protobuf with the code `@opentelemetry/otlp-transformer` generated from the published opentelemetry-proto
 * definitions (protobufjs), never by hand. `mode`: how it answers (`Mode`).
 */
const require = createRequire(import.meta.url)
interface ProtoType {
  decode(bytes: Uint8Array): unknown
  toObject(
    message: unknown,
    options: { longs: StringConstructor; bytes: StringConstructor; defaults: boolean }
  ): unknown
}
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js") as {
  opentelemetry: {
    proto: {
      collector: {
        trace: { v1: { ExportTraceServiceRequest: ProtoType } }
        metrics: { v1: { ExportMetricsServiceRequest: ProtoType } }
        logs: { v1: { ExportLogsServiceRequest: ProtoType } }
      }
    }
  }
}
const collector = root.opentelemetry.proto.collector
const types: Record<string, ProtoType> = {
  "/v1/traces": collector.trace.v1.ExportTraceServiceRequest,
  "/v1/metrics": collector.metrics.v1.ExportMetricsServiceRequest,
  "/v1/logs": collector.logs.v1.ExportLogsServiceRequest
}

export interface Received {
  readonly path: string
  readonly contentType: string
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly raw: Buffer
}

/**
 * How the receiver answers: 200, 500, never; or as a hostile or overloaded collector does: 413 or 429 (with a
 * `retry-after`), a redirect (307, to a path of its own: `redirected` counts what followed it), a connection reset
 * before any answer, a 200 whose headers come a byte at a time, never ending, or a 200 whose body never ends, poured
 * as fast as the client reads it.
 */
export type Mode = "ok" | "fail" | "hang" | "413" | "429" | "redirect" | "reset" | "drip" | "flood"

export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /**
   * The paths of every request that reached the receiver, counted as its headers arrive: a client that gives up
   * on a collector (its timeout, the session's end) may stop before the body is whole, which `received` (whole
   * bodies only) would not show, though the collector was reached.
   */
  readonly attempts: Array<string>
  /** Requests to the path a redirect names (`redirect` mode): a client that follows it would land there. */
  readonly redirected: Array<Received>
  close(): Promise<void>
}

export const startReceiver = (mode: Mode): Promise<Receiver> =>
  new Promise((resolve) => {
    const received: Array<Received> = []
    const attempts: Array<string> = []
    const hanging: Array<NodeHttp.ServerResponse> = []
    const redirected: Array<Received> = []
    const drips: Array<NodeJS.Timeout> = []
    const server = NodeHttp.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      const whole = (): Received => ({
        path: req.url ?? "",
        contentType: req.headers["content-type"] ?? "",
        headers: req.headers,
        raw: Buffer.concat(chunks)
      })
      if (req.url?.startsWith("/elsewhere") === true) {
        req.on("end", () => {
          redirected.push(whole())
          res.end("{}")
        })
        return
      }
      attempts.push(req.url ?? "")
      req.on("end", () => {
        received.push(whole())
        if (mode === "hang") hanging.push(res)
        else if (mode === "413" || mode === "429") {
          res.writeHead(Number(mode), { "retry-after": "30" })
          res.end("go away")
        } else if (mode === "redirect") {
          res.writeHead(307, { location: `/elsewhere${req.url ?? ""}` })
          res.end()
        } else if (mode === "reset") req.socket.resetAndDestroy()
        else if (mode === "drip") {
          hanging.push(res)
          req.socket.write("HTTP/1.1 200 OK\r\nx-drip: ")
          const drip = setInterval(() => req.socket.write("x"), 20)
          drips.push(drip)
          req.socket.on("close", () => clearInterval(drip))
        } else if (mode === "flood") {
          hanging.push(res)
          res.writeHead(200, { "content-type": "application/json" })
          const chunk = Buffer.alloc(64 * 1024, 0x20)
          const pour = () => {
            while (!res.destroyed && res.write(chunk)) {}
          }
          res.on("drain", pour)
          pour()
        } else {
          res.statusCode = mode === "ok" ? 200 : 500
          res.end(mode === "ok" ? "{}" : "broken")
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        received,
        attempts,
        redirected,
        close: () =>
          new Promise<void>((done) => {
            for (const drip of drips) clearInterval(drip)
            for (const res of hanging) res.destroy()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

const hex = (base64: string) => Buffer.from(base64, "base64").toString("hex")

/** Plain JSON, walked without trusting its shape: a missing field reads as undefined or an empty list. */
type Json = unknown
const get = (value: Json, key: string): Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, Json>)[key]
    : undefined
const list = (value: Json, key: string): ReadonlyArray<Json> => {
  const v = get(value, key)
  return Array.isArray(v) ? v : []
}
const text = (value: Json, key: string): string | undefined => {
  const v = get(value, key)
  return typeof v === "string" ? v : undefined
}

/** A request's payload as plain JSON in OTLP/JSON's shape (ids as hex), whichever protocol carried it. */
export const decode = (r: Received): Json => {
  if (r.contentType.startsWith("application/json")) return JSON.parse(r.raw.toString("utf8"))
  const type = types[r.path]
  if (type === undefined) throw new Error(`no OTLP type for ${r.path}`)
  const object = type.toObject(type.decode(r.raw), { longs: String, bytes: String, defaults: false })
  // protobuf bytes fields (ids) come as base64: OTLP/JSON writes them as hex.
  return JSON.parse(JSON.stringify(object), (key, value: Json) =>
    (key === "traceId" || key === "spanId" || key === "parentSpanId") && typeof value === "string" ? hex(value) : value
  )
}

/** An OTLP AnyValue as a plain value. */
export const anyValue = (v: Json): unknown => {
  if (get(v, "stringValue") !== undefined) return get(v, "stringValue")
  if (get(v, "boolValue") !== undefined) return get(v, "boolValue")
  if (get(v, "intValue") !== undefined) return Number(get(v, "intValue"))
  if (get(v, "doubleValue") !== undefined) return Number(get(v, "doubleValue"))
  if (get(v, "arrayValue") !== undefined) return list(get(v, "arrayValue"), "values").map(anyValue)
  if (get(v, "kvlistValue") !== undefined) return attributes(list(get(v, "kvlistValue"), "values"))
  return undefined
}

export const attributes = (kvs: ReadonlyArray<Json>): Record<string, unknown> =>
  Object.fromEntries(kvs.map((kv) => [text(kv, "key") ?? "", anyValue(get(kv, "value"))]))

/** The items of every request to `path`: resource → scope → item, as the three signals nest them. */
const items = (all: ReadonlyArray<Received>, path: string, resources: string, scopes: string, item: string) =>
  all
    .filter((r) => r.path === path)
    .flatMap((r) => list(decode(r), resources).flatMap((rs) => list(rs, scopes).flatMap((ss) => list(ss, item))))

/** The attributes of a request's first resource. */
export const resourceOf = (r: Received): Record<string, unknown> => {
  const first = [
    ...list(decode(r), "resourceSpans"),
    ...list(decode(r), "resourceLogs"),
    ...list(decode(r), "resourceMetrics")
  ][0]
  return attributes(list(get(first, "resource"), "attributes"))
}

export interface SpanView {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly attributes: Record<string, unknown>
  readonly start: bigint
  readonly end: bigint
  readonly status: { readonly code: number; readonly message: string | undefined }
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Record<string, unknown> }>
  readonly links: ReadonlyArray<{
    readonly traceId: string
    readonly spanId: string
    readonly attributes: Record<string, unknown>
  }>
}

export const spansOf = (all: ReadonlyArray<Received>): Array<SpanView> =>
  items(all, "/v1/traces", "resourceSpans", "scopeSpans", "spans").map((s): SpanView => {
    const parent = text(s, "parentSpanId")
    return {
      name: text(s, "name") ?? "",
      traceId: text(s, "traceId") ?? "",
      spanId: text(s, "spanId") ?? "",
      parentSpanId: parent === "" ? undefined : parent,
      attributes: attributes(list(s, "attributes")),
      start: BigInt(text(s, "startTimeUnixNano") ?? "0"),
      end: BigInt(text(s, "endTimeUnixNano") ?? "0"),
      status: { code: Number(get(get(s, "status"), "code") ?? 0), message: text(get(s, "status"), "message") },
      events: list(s, "events").map((e) => ({
        name: text(e, "name") ?? "",
        attributes: attributes(list(e, "attributes"))
      })),
      links: list(s, "links").map((l) => ({
        traceId: text(l, "traceId") ?? "",
        spanId: text(l, "spanId") ?? "",
        attributes: attributes(list(l, "attributes"))
      }))
    }
  })

export interface LogView {
  readonly body: unknown
  readonly attributes: Record<string, unknown>
  readonly traceId: string | undefined
  readonly spanId: string | undefined
}

export const logsOf = (all: ReadonlyArray<Received>): Array<LogView> =>
  items(all, "/v1/logs", "resourceLogs", "scopeLogs", "logRecords").map(
    (l): LogView => ({
      body: anyValue(get(l, "body")),
      attributes: attributes(list(l, "attributes")),
      traceId: text(l, "traceId"),
      spanId: text(l, "spanId")
    })
  )

export interface MetricPoint {
  readonly name: string
  readonly attributes: Record<string, unknown>
  readonly value: number
}

/** Every data point of every metric (sums: their value; histograms: their count), across all requests. */
export const metricsOf = (all: ReadonlyArray<Received>): Array<MetricPoint> =>
  items(all, "/v1/metrics", "resourceMetrics", "scopeMetrics", "metrics").flatMap((m) => {
    const data = get(m, "sum") ?? get(m, "gauge") ?? get(m, "histogram")
    return list(data, "dataPoints").map(
      (p): MetricPoint => ({
        name: text(m, "name") ?? "",
        attributes: attributes(list(p, "attributes")),
        value: Number(get(p, "asInt") ?? get(p, "asDouble") ?? get(p, "count") ?? 0)
      })
    )
  })
