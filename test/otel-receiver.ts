import { createRequire } from "node:module"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A local OTLP/HTTP receiver for the telemetry tests: keeps every request's raw bytes, and decodes them, JSON as
 * JSON and protobuf with the code `@opentelemetry/otlp-transformer` generated from the published opentelemetry-proto
 * definitions (protobufjs), never by hand. `mode`: answer 200, answer 500, or never answer.
 */
const require = createRequire(import.meta.url)
interface ProtoType {
  decode(bytes: Uint8Array): unknown
  toObject(message: unknown, options: { longs: StringConstructor; bytes: StringConstructor; defaults: boolean }): unknown
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

export type Mode = "ok" | "fail" | "hang"

export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  close(): Promise<void>
}

export const startReceiver = (mode: Mode): Promise<Receiver> =>
  new Promise((resolve) => {
    const received: Array<Received> = []
    const hanging: Array<NodeHttp.ServerResponse> = []
    const server = NodeHttp.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        received.push({
          path: req.url ?? "",
          contentType: req.headers["content-type"] ?? "",
          headers: req.headers,
          raw: Buffer.concat(chunks)
        })
        if (mode === "hang") hanging.push(res)
        else {
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
        close: () =>
          new Promise<void>((done) => {
            for (const res of hanging) res.destroy()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

const hex = (base64: string) => Buffer.from(base64, "base64").toString("hex")

/** A request's payload as plain JSON in OTLP/JSON's shape (ids as hex), whichever protocol carried it. */
export const decode = (r: Received): any => {
  if (r.contentType.startsWith("application/json")) return JSON.parse(r.raw.toString("utf8"))
  const type = types[r.path]
  if (type === undefined) throw new Error(`no OTLP type for ${r.path}`)
  const object = type.toObject(type.decode(r.raw), { longs: String, bytes: String, defaults: false })
  // protobuf bytes fields (ids) come as base64: OTLP/JSON writes them as hex.
  return JSON.parse(JSON.stringify(object), (key, value) =>
    (key === "traceId" || key === "spanId" || key === "parentSpanId") && typeof value === "string" ? hex(value) : value)
}

/** An OTLP AnyValue as a plain value. */
export const anyValue = (v: any): unknown => {
  if (v === undefined || v === null) return undefined
  if ("stringValue" in v) return v.stringValue
  if ("boolValue" in v) return v.boolValue
  if ("intValue" in v) return Number(v.intValue)
  if ("doubleValue" in v) return Number(v.doubleValue)
  if ("arrayValue" in v) return (v.arrayValue.values ?? []).map(anyValue)
  if ("kvlistValue" in v) return attributes(v.kvlistValue.values)
  return undefined
}

export const attributes = (kvs: ReadonlyArray<any> | undefined): Record<string, unknown> =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, anyValue(kv.value)]))

export interface SpanView {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly attributes: Record<string, unknown>
  readonly start: bigint
  readonly end: bigint
}

export const spansOf = (all: ReadonlyArray<Received>): Array<SpanView> =>
  all.filter((r) => r.path === "/v1/traces").flatMap((r) =>
    (decode(r).resourceSpans ?? []).flatMap((rs: any) =>
      (rs.scopeSpans ?? []).flatMap((ss: any) =>
        (ss.spans ?? []).map((s: any): SpanView => ({
          name: s.name,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId === "" ? undefined : s.parentSpanId,
          attributes: attributes(s.attributes),
          start: BigInt(s.startTimeUnixNano),
          end: BigInt(s.endTimeUnixNano)
        }))
      )
    )
  )

export interface LogView {
  readonly body: unknown
  readonly attributes: Record<string, unknown>
  readonly traceId: string | undefined
  readonly spanId: string | undefined
}

export const logsOf = (all: ReadonlyArray<Received>): Array<LogView> =>
  all.filter((r) => r.path === "/v1/logs").flatMap((r) =>
    (decode(r).resourceLogs ?? []).flatMap((rl: any) =>
      (rl.scopeLogs ?? []).flatMap((sl: any) =>
        (sl.logRecords ?? []).map((l: any): LogView => ({
          body: anyValue(l.body),
          attributes: attributes(l.attributes),
          traceId: l.traceId,
          spanId: l.spanId
        }))
      )
    )
  )

export interface MetricPoint {
  readonly name: string
  readonly attributes: Record<string, unknown>
  readonly value: number
}

/** Every data point of every metric (sums: their value; histograms: their count), across all requests. */
export const metricsOf = (all: ReadonlyArray<Received>): Array<MetricPoint> =>
  all.filter((r) => r.path === "/v1/metrics").flatMap((r) =>
    (decode(r).resourceMetrics ?? []).flatMap((rm: any) =>
      (rm.scopeMetrics ?? []).flatMap((sm: any) =>
        (sm.metrics ?? []).flatMap((m: any) => {
          const points = m.sum?.dataPoints ?? m.gauge?.dataPoints ?? m.histogram?.dataPoints ?? []
          return points.map((p: any): MetricPoint => ({
            name: m.name,
            attributes: attributes(p.attributes),
            value: Number(p.asInt ?? p.asDouble ?? p.count ?? 0)
          }))
        })
      )
    )
  )
