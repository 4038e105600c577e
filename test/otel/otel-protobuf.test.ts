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
})
