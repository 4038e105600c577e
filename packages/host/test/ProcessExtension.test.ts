import { describe, expect, it } from "@effect/vitest"
import { PassThrough } from "node:stream"
import { flushBuffered } from "../src/ProcessExtension.ts"

describe("ProcessExtension.flushBuffered (attribution, docs/design.md#failures)", () => {
  it("emits what Node has read but not yet emitted, in order, before it returns", () => {
    const stream = new PassThrough()
    const seen: Array<string> = []
    stream.on("data", (chunk: Buffer) => seen.push(chunk.toString("utf8")))
    stream.pause() // as if the stream had been paused: chunks are buffered, not emitted
    stream.write("{}\n")
    stream.write(`{"reason":"stray"}\n`)
    expect(seen).toEqual([])
    expect(stream.readableLength).toBeGreaterThan(0)
    flushBuffered(stream)
    // Synchronously: a request written next can no longer be the one these lines are attributed to.
    expect(seen.join("")).toBe(`{}\n{"reason":"stray"}\n`)
    expect(stream.readableLength).toBe(0)
  })

  it("finds nothing in flowing mode, where Node emits each chunk as it reads it", () => {
    const stream = new PassThrough()
    const seen: Array<string> = []
    stream.on("data", (chunk: Buffer) => seen.push(chunk.toString("utf8")))
    stream.write("{}\n")
    expect(seen).toEqual(["{}\n"])
    flushBuffered(stream)
    expect(seen).toEqual(["{}\n"])
  })
})
