import { batchHead, encodeBatch } from "@abhed/host/TelemetryProtobuf"
import { assert, describe, it } from "@effect/vitest"
import { spansOf } from "../support/otel-receiver.ts"

/**
 * The protobuf writer (TelemetryProtobuf.ts) read back with the published OTLP definitions: strings of every length
 * around the one-byte length prefix, ASCII or not (short ASCII strings take a path of their own).
 */

/** A batch of `count` spans (`Span`'s fields written one by one, as the tracer's exporter does), named `name`. */
const encodeSpans = (
  resource: ReadonlyArray<{ readonly key: string; readonly value: { readonly stringValue: string } }>,
  count: number,
  name: string,
  attributes: ReadonlyArray<readonly [string, string]>
) =>
  encodeBatch(
    batchHead({ attributes: [...resource], droppedAttributesCount: 0 }, "abhed"),
    Array.from({ length: count }, (_, i) => i),
    (w, i) => {
      w.hexBytes(1, "0af7651916cd43dd8448eb211c80319c")
      w.hexBytes(2, "b7ad6b7169203331")
      w.string(5, name)
      w.uint(6, 1)
      w.fixed64(7, 1764626400000000000n + BigInt(i))
      w.fixed64(8, 1764626400000100000n + BigInt(i))
      for (const [key, value] of attributes) w.keyValue(9, key, value)
      const status = w.begin(15)
      w.uint(3, 1)
      w.end(status)
    }
  )
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
    const raw = encodeSpans(
      [{ key: "service.name", value: { stringValue: "abhed" } }],
      1,
      "abhed.tool_call",
      values.map((v, i) => [`k${i}`, v])
    )
    const [span] = spansOf([
      { path: "/v1/traces", contentType: "application/x-protobuf", headers: {}, raw: Buffer.from(raw) }
    ])
    assert.ok(span)
    assert.strictEqual(span.name, "abhed.tool_call")
    assert.strictEqual(span.traceId, "0af7651916cd43dd8448eb211c80319c")
    assert.deepStrictEqual(span.attributes, Object.fromEntries(values.map((v, i) => [`k${i}`, v])))
  })

  it("gives each batch bytes of its own: a small batch after a large one changes neither", () => {
    const batch = (name: string, value: string) => encodeSpans([], 64, name, [["k", value]])
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
