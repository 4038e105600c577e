import { OtlpResource } from "effect/observability"

/**
 * OTLP traces and logs in the protobuf wire format (opentelemetry-proto's `ExportTraceServiceRequest` and
 * `ExportLogsServiceRequest`), written in one pass into one growing buffer, straight from what the host keeps (its
 * spans and records: TelemetryTracerExport.ts, TelemetryLogs.ts), with no OTLP object per item in between.
 * effect's own encoder allocates an array per field and a BigInt per varint: measured at about ten times the CPU of
 * a whole dispatch per span, spent on the same thread as the dispatches; and building its OTLP/JSON-shaped objects
 * first cost about as much as encoding them.
 */

const Int64Bound = 2 ** 63

/** A field's length prefix is written after its content: one byte reserved, the content moved if it needs more. */
export class Writer {
  buf: Buffer = Buffer.allocUnsafe(64 * 1024)
  pos = 0
  /** The field `put` writes attributes as (a span's 9, a log record's 6). */
  kvField = 0
  /** An attribute as field `kvField`: what the host's attribute makers (`TelemetryRecord.ts`) are given. */
  readonly put = (key: string, value: unknown): void => this.keyValue(this.kvField, key, value)

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

  fixed64(field: number, value: bigint) {
    this.tag(field, 1)
    this.ensure(8)
    this.buf.writeBigUInt64LE(BigInt.asUintN(64, value), this.pos)
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

  /** A random id of `length` bytes (an exchange's span id: random as effect's `Hex.random`, never made as text). */
  randomId(field: number, length: number) {
    this.tag(field, 2)
    this.ensure(1 + length)
    this.buf[this.pos++] = length
    for (let i = 0; i < length; i += 4) {
      this.buf.writeUInt32LE((Math.random() * 0x1_0000_0000) >>> 0, this.pos)
      this.pos += 4
    }
  }

  /** A nested message: `begin`, its content, then `end` with what `begin` gave puts its length in front. */
  begin(field: number): number {
    this.tag(field, 2)
    this.ensure(1)
    return ++this.pos
  }

  end(start: number) {
    this.finish(start, this.pos - start)
  }

  /** Bytes already encoded (a message written once: the resource, the scope). */
  raw(bytes: Uint8Array) {
    this.ensure(bytes.length)
    this.buf.set(bytes, this.pos)
    this.pos += bytes.length
  }

  /** A non-default unsigned integer field (a count, a kind, a code): zero is not written. */
  uint(field: number, value: number) {
    if (value === 0) return
    this.tag(field, 0)
    this.varint(value)
  }

  /** An attribute (`KeyValue`) from a JavaScript value, as effect's `unknownToAttributeValue` makes its value. */
  keyValue(field: number, key: string, value: unknown) {
    const kv = this.begin(field)
    this.string(1, key)
    const v = this.begin(2)
    this.value(value)
    this.end(v)
    this.end(kv)
  }

  /** An `AnyValue`'s content from a JavaScript value. */
  value(value: unknown) {
    switch (typeof value) {
      case "string":
        return this.string(1, value)
      case "boolean":
        this.tag(2, 0)
        return this.varint(value ? 1 : 0)
      case "number":
        if (!Number.isInteger(value) || value < -Int64Bound || value >= Int64Bound) return this.double(4, value)
        this.tag(3, 0)
        return value >= 0 && value <= Number.MAX_SAFE_INTEGER ? this.varint(value) : this.int64(BigInt(value))
      case "bigint":
        if (BigInt.asIntN(64, value) !== value) return this.string(1, String(value))
        this.tag(3, 0)
        return this.int64(value)
    }
    if (!Array.isArray(value)) return anyValue(this, OtlpResource.unknownToAttributeValue(value))
    const array = this.begin(5)
    for (const x of value) {
      const item = this.begin(1)
      this.value(x)
      this.end(item)
    }
    this.end(array)
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

/** An `AnyValue` in effect's OTLP shape (the resource's attributes, and what `value` leaves to effect's formatting). */
const anyValue = (w: Writer, v: OtlpResource.AnyValue) => {
  if (v.stringValue !== undefined && v.stringValue !== null) w.string(1, v.stringValue)
  else if (v.boolValue !== undefined && v.boolValue !== null) w.value(v.boolValue)
  else if (v.intValue !== undefined && v.intValue !== null) {
    w.tag(3, 0)
    w.int64(BigInt(v.intValue))
  } else if (v.doubleValue !== undefined && v.doubleValue !== null) w.double(4, v.doubleValue)
  else if (v.arrayValue !== undefined) {
    const array = w.begin(5)
    for (const x of v.arrayValue.values) {
      const item = w.begin(1)
      anyValue(w, x)
      w.end(item)
    }
    w.end(array)
  } else if (v.kvlistValue !== undefined) {
    const list = w.begin(6)
    for (const kv of v.kvlistValue.values) keyValue(w, 1, kv)
    w.end(list)
  } else if (v.bytesValue !== undefined) w.bytes(7, v.bytesValue)
}

/** A `KeyValue` (key 1, value 2) as field `field` of the message being written. */
const keyValue = (w: Writer, field: number, kv: OtlpResource.KeyValue) => {
  const item = w.begin(field)
  w.string(1, kv.key)
  const value = w.begin(2)
  anyValue(w, kv.value)
  w.end(value)
  w.end(item)
}

/** What each batch of an exporter starts with, encoded once: its resource and its scope (`abhed`). */
export interface BatchHead {
  readonly resource: Uint8Array
  readonly scope: Uint8Array
}

export const batchHead = (resource: OtlpResource.Resource, scopeName: string): BatchHead => {
  const w = new Writer()
  const r = w.begin(1)
  for (const kv of resource.attributes) keyValue(w, 1, kv)
  w.uint(2, resource.droppedAttributesCount)
  w.end(r)
  const head = w.result()
  w.pos = 0
  const s = w.begin(1)
  w.string(1, scopeName)
  w.end(s)
  return { resource: head, scope: w.result() }
}

/**
 * A batch as an `ExportTraceServiceRequest` or an `ExportLogsServiceRequest` (the same frame: one resource's, one
 * scope's items, field 2 at each level): each item's content written by `item`.
 */
export const encodeBatch = <A>(
  head: BatchHead,
  items: ReadonlyArray<A>,
  item: (w: Writer, a: A) => void
): Uint8Array => {
  const w = writer()
  const resource = w.begin(1)
  w.raw(head.resource)
  const scope = w.begin(2)
  w.raw(head.scope)
  for (const a of items) {
    const at = w.begin(2)
    item(w, a)
    w.end(at)
  }
  w.end(scope)
  w.end(resource)
  return w.result()
}
