import type { OtlpLogger, OtlpResource, OtlpTracer } from "effect/observability"

/**
 * OTLP traces and logs in the protobuf wire format (opentelemetry-proto's `ExportTraceServiceRequest` and
 * `ExportLogsServiceRequest`), written in one pass into one growing buffer. effect's own encoder allocates an array
 * per field and a BigInt per varint: measured at about ten times the CPU of a whole dispatch per span, spent on the
 * same thread as the dispatches. Same input as effect's (its OTLP/JSON shapes), same bytes on the wire.
 */

/** A field's length prefix is written after its content: one byte reserved, the content moved if it needs more. */
class Writer {
  buf: Buffer = Buffer.allocUnsafe(64 * 1024)
  pos = 0

  private ensure(n: number) {
    if (this.pos + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.pos + n) size *= 2
    const next = Buffer.allocUnsafe(size)
    next.set(this.buf.subarray(0, this.pos))
    this.buf = next
  }

  varint(value: number) {
    this.ensure(10)
    let n = value
    while (n > 127) {
      this.buf[this.pos++] = (n % 128) | 0x80
      n = Math.floor(n / 128)
    }
    this.buf[this.pos++] = n
  }

  /** A signed 64-bit integer (two's complement for negatives, as protobuf's int64). */
  int64(value: bigint) {
    let n = BigInt.asUintN(64, value)
    this.ensure(10)
    while (n > BigInt(127)) {
      this.buf[this.pos++] = Number(n & BigInt(127)) | 0x80
      n >>= BigInt(7)
    }
    this.buf[this.pos++] = Number(n)
  }

  tag(field: number, wire: number) {
    this.varint(field * 8 + wire)
  }

  fixed64(field: number, value: string | number | bigint | OtlpResource.LongBits) {
    this.tag(field, 1)
    this.ensure(8)
    const n =
      typeof value === "object" ? (BigInt(value.high >>> 0) << BigInt(32)) | BigInt(value.low >>> 0) : BigInt(value)
    this.buf.writeBigUInt64LE(BigInt.asUintN(64, n), this.pos)
    this.pos += 8
  }

  double(field: number, value: number) {
    this.tag(field, 1)
    this.ensure(8)
    this.buf.writeDoubleLE(value, this.pos)
    this.pos += 8
  }

  string(field: number, value: string) {
    this.tag(field, 2)
    const max = value.length * 3
    this.ensure(max + 5)
    // Short ASCII (attribute keys, names, ids, most values) byte by byte: `Buffer.write` is a call into C++ each.
    if (value.length < 128) {
      let i = 0
      const at = this.pos + 1
      for (; i < value.length; i++) {
        const c = value.charCodeAt(i)
        if (c >= 0x80) break
        this.buf[at + i] = c
      }
      if (i === value.length) {
        this.buf[this.pos] = value.length
        this.pos = at + value.length
        return
      }
    }
    const start = this.pos + 1
    const written = this.buf.write(value, start, "utf8")
    this.pos = start + written
    this.finish(start, written)
  }

  bytes(field: number, value: Uint8Array) {
    this.tag(field, 2)
    this.varint(value.length)
    this.ensure(value.length)
    this.buf.set(value, this.pos)
    this.pos += value.length
  }

  /** Ids: OTLP/JSON's hex, protobuf's bytes. */
  hexBytes(field: number, hex: string | Uint8Array | undefined) {
    if (hex === undefined || hex.length === 0) return
    if (typeof hex !== "string") return this.bytes(field, hex)
    if (hex.length >= 256) return this.bytes(field, Buffer.from(hex, "hex"))
    // Straight into the buffer (no Buffer per id): at most 127 bytes, so a one-byte length, written after.
    this.tag(field, 2)
    this.ensure(1 + hex.length / 2)
    const written = this.buf.write(hex, this.pos + 1, "hex")
    this.buf[this.pos] = written
    this.pos += 1 + written
  }

  /** A nested message: its content written by `write`, then its length put in front. */
  message(field: number, write: () => void) {
    this.tag(field, 2)
    this.ensure(1)
    const start = ++this.pos
    write()
    this.finish(start, this.pos - start)
  }

  /** `pos` is at the end of the content, which began at `start` (one byte after the one reserved). */
  private finish(start: number, length: number) {
    // One byte was reserved for the length: a longer varint moves the content up.
    let size = 1
    for (let n = length; n > 127; n = Math.floor(n / 128)) size++
    if (size > 1) {
      this.ensure(size - 1)
      this.buf.copyWithin(start + size - 1, start, start + length)
    }
    this.pos = start - 1
    this.varint(length)
    this.pos = start - 1 + size + length
  }

  result(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.pos))
  }
}

/**
 * One writer for every batch, its buffer kept at the largest batch's size: a batch of 512 spans grew a fresh one
 * through 64, 128 and 256 KiB, garbage on the dispatches' thread each time. `result` copies out what was written.
 */
const shared = new Writer()
const writer = (): Writer => {
  shared.pos = 0
  return shared
}

const anyValue = (w: Writer, v: OtlpResource.AnyValue) => {
  if (v.stringValue !== undefined && v.stringValue !== null) w.string(1, v.stringValue)
  else if (v.boolValue !== undefined && v.boolValue !== null) {
    w.tag(2, 0)
    w.varint(v.boolValue ? 1 : 0)
  } else if (v.intValue !== undefined && v.intValue !== null) {
    w.tag(3, 0)
    w.int64(BigInt(v.intValue))
  } else if (v.doubleValue !== undefined && v.doubleValue !== null) w.double(4, v.doubleValue)
  else if (v.arrayValue !== undefined) {
    const values = v.arrayValue.values
    w.message(5, () => {
      for (const x of values) w.message(1, () => anyValue(w, x))
    })
  } else if (v.kvlistValue !== undefined) {
    const values = v.kvlistValue.values
    w.message(6, () => keyValues(w, 1, values))
  } else if (v.bytesValue !== undefined) w.bytes(7, v.bytesValue)
}

const keyValues = (w: Writer, field: number, kvs: ReadonlyArray<OtlpResource.KeyValue>) => {
  for (const kv of kvs) {
    w.message(field, () => {
      w.string(1, kv.key)
      w.message(2, () => anyValue(w, kv.value))
    })
  }
}

const uint = (w: Writer, field: number, value: number | undefined) => {
  if (value === undefined || value === 0) return
  w.tag(field, 0)
  w.varint(value)
}

const resource = (w: Writer, r: OtlpResource.Resource) =>
  w.message(1, () => {
    keyValues(w, 1, r.attributes)
    uint(w, 2, r.droppedAttributesCount)
  })

const scope = (w: Writer, s: { readonly name: string; readonly version?: string | undefined }) =>
  w.message(1, () => {
    w.string(1, s.name)
    if (s.version !== undefined) w.string(2, s.version)
  })

type Span = OtlpTracer.ScopeSpan["spans"][number]

const span = (w: Writer, s: Span) => {
  w.hexBytes(1, s.traceId)
  w.hexBytes(2, s.spanId)
  w.hexBytes(4, s.parentSpanId)
  w.string(5, s.name)
  uint(w, 6, s.kind)
  w.fixed64(7, s.startTimeUnixNano)
  w.fixed64(8, s.endTimeUnixNano)
  keyValues(w, 9, s.attributes)
  uint(w, 10, s.droppedAttributesCount)
  for (const e of s.events) {
    w.message(11, () => {
      w.fixed64(1, e.timeUnixNano)
      w.string(2, e.name)
      keyValues(w, 3, e.attributes)
      uint(w, 4, e.droppedAttributesCount)
    })
  }
  uint(w, 12, s.droppedEventsCount)
  for (const l of s.links) {
    w.message(13, () => {
      w.hexBytes(1, l.traceId)
      w.hexBytes(2, l.spanId)
      keyValues(w, 4, l.attributes)
      uint(w, 5, l.droppedAttributesCount)
    })
  }
  uint(w, 14, s.droppedLinksCount)
  w.message(15, () => {
    if (s.status.message !== undefined) w.string(2, s.status.message)
    uint(w, 3, s.status.code)
  })
}

export const encodeTraces = (data: OtlpTracer.TraceData): Uint8Array => {
  const w = writer()
  for (const rs of data.resourceSpans) {
    w.message(1, () => {
      resource(w, rs.resource)
      for (const ss of rs.scopeSpans) {
        w.message(2, () => {
          scope(w, ss.scope)
          for (const s of ss.spans) w.message(2, () => span(w, s))
        })
      }
    })
  }
  return w.result()
}

type LogRecord = NonNullable<OtlpLogger.LogsData["resourceLogs"][number]["scopeLogs"][number]["logRecords"]>[number]

const logRecord = (w: Writer, l: LogRecord) => {
  w.fixed64(1, l.timeUnixNano)
  uint(w, 2, l.severityNumber)
  if (l.severityText !== undefined) w.string(3, l.severityText)
  const body = l.body
  if (body !== undefined) w.message(5, () => anyValue(w, body))
  keyValues(w, 6, l.attributes)
  uint(w, 7, l.droppedAttributesCount)
  w.hexBytes(9, l.traceId)
  w.hexBytes(10, l.spanId)
  w.fixed64(11, l.observedTimeUnixNano)
}

export const encodeLogs = (data: OtlpLogger.LogsData): Uint8Array => {
  const w = writer()
  for (const rl of data.resourceLogs) {
    w.message(1, () => {
      if (rl.resource !== undefined) resource(w, rl.resource)
      for (const sl of rl.scopeLogs) {
        w.message(2, () => {
          if (sl.scope !== undefined) scope(w, sl.scope)
          for (const l of sl.logRecords ?? []) w.message(2, () => logRecord(w, l))
        })
      }
    })
  }
  return w.result()
}
