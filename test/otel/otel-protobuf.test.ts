import { encodeTraces } from "@abhed/host/TelemetryProtobuf"
import { assert, describe, it } from "@effect/vitest"
import { spansOf } from "../support/otel-receiver.ts"

/**
 * The protobuf encoder for traces (TelemetryProtobuf.ts) read back with the published OTLP definitions: strings of
 * every length around the one-byte length prefix, ASCII or not (short ASCII strings take a path of their own).
 */
describe("OTLP protobuf encoding", () => {
  it("writes strings short and long, ASCII and not, as the published definitions read them", () => {
    const values = [
      "",
      "deny",
      "rm is not allowed",
      "é",
      "naïve…",
      "ascii then ü at the end",
      "x".repeat(127),
      "x".repeat(128),
      `${"y".repeat(126)}é`,
      "z".repeat(300),
      "日本語の理由".repeat(30)
    ]
    const attributes = values.map((v, i) => ({ key: `k${i}`, value: { stringValue: v } }))
    const raw = encodeTraces({
      resourceSpans: [
        {
          resource: {
            attributes: [{ key: "service.name", value: { stringValue: "abhed" } }],
            droppedAttributesCount: 0
          },
          scopeSpans: [
            {
              scope: { name: "abhed" },
              spans: [
                {
                  traceId: "0af7651916cd43dd8448eb211c80319c",
                  spanId: "b7ad6b7169203331",
                  parentSpanId: undefined,
                  name: "abhed.tool_call",
                  kind: 1,
                  startTimeUnixNano: "1764626400000000000",
                  endTimeUnixNano: "1764626400000100000",
                  attributes,
                  droppedAttributesCount: 0,
                  events: [],
                  droppedEventsCount: 0,
                  status: { code: 1 },
                  links: [],
                  droppedLinksCount: 0
                }
              ]
            }
          ]
        }
      ]
    })
    const [span] = spansOf([
      { path: "/v1/traces", contentType: "application/x-protobuf", headers: {}, raw: Buffer.from(raw) }
    ])
    assert.ok(span)
    assert.strictEqual(span.name, "abhed.tool_call")
    assert.strictEqual(span.traceId, "0af7651916cd43dd8448eb211c80319c")
    assert.deepStrictEqual(span.attributes, Object.fromEntries(values.map((v, i) => [`k${i}`, v])))
  })

  it("gives each batch bytes of its own: a small batch after a large one changes neither", () => {
    const batch = (name: string, value: string) =>
      encodeTraces({
        resourceSpans: [
          {
            resource: { attributes: [], droppedAttributesCount: 0 },
            scopeSpans: [
              {
                scope: { name: "abhed" },
                spans: Array.from({ length: 64 }, (_, i) => ({
                  traceId: "0af7651916cd43dd8448eb211c80319c",
                  spanId: "b7ad6b7169203331",
                  parentSpanId: undefined,
                  name,
                  kind: 1,
                  startTimeUnixNano: String(1764626400000000000n + BigInt(i)),
                  endTimeUnixNano: String(1764626400000100000n + BigInt(i)),
                  attributes: [{ key: "k", value: { stringValue: value } }],
                  droppedAttributesCount: 0,
                  events: [],
                  droppedEventsCount: 0,
                  status: { code: 1 },
                  links: [],
                  droppedLinksCount: 0
                }))
              }
            ]
          }
        ]
      })
    const read = (raw: Uint8Array) =>
      spansOf([{ path: "/v1/traces", contentType: "application/x-protobuf", headers: {}, raw: Buffer.from(raw) }])
    // 64 spans of 4 KiB each: past the writer's first buffer.
    const large = batch("abhed.large", "l".repeat(4096))
    const copy = Uint8Array.from(large)
    const small = batch("abhed.small", "s")
    assert.deepStrictEqual(large, copy)
    assert.deepStrictEqual(
      read(large).map((span) => [span.name, span.attributes["k"]]),
      Array.from({ length: 64 }, () => ["abhed.large", "l".repeat(4096)])
    )
    assert.deepStrictEqual(
      read(small).map((span) => [span.name, span.attributes["k"]]),
      Array.from({ length: 64 }, () => ["abhed.small", "s"])
    )
  })
})
