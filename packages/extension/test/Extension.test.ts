import { Extension } from "@abhed/extension"
import { Effect, References, Sink, Stream } from "effect"
import * as Stdio from "effect/Stdio"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { exchange, fixtures, request, start, toolCall, toolResult } from "./ExtensionProcess.ts"

const sdkExtension = `${fixtures}sdk-extension.ts`

/** In-process runs log their (expected) warnings nowhere, to keep the test output readable. */
const quiet = <A, E>(effect: Effect.Effect<A, E>) => Effect.provideService(effect, References.MinimumLogLevel, "None")

/** Run `Extension.run` in-process over the given stdin chunks; returns everything written to stdout. */
const runInProcess = (handlers: Extension.Handlers, chunks: ReadonlyArray<string>): Promise<string> => {
  const written: Array<string> = []
  const encoder = new TextEncoder()
  const layer = Stdio.layerTest({
    stdin: Stream.fromIterable(chunks.map((c) => encoder.encode(c))),
    stdout: () =>
      Sink.forEach((chunk: string | Uint8Array) =>
        Effect.sync(() => {
          written.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk))
        })
      )
  })
  return Effect.runPromise(Extension.run(handlers).pipe(Effect.provide(layer), quiet)).then(() => written.join(""))
}

describe("Extension.respond (in-process)", () => {
  const respond = Extension.respond({
    tool_call: (req) => Effect.succeed(req.tool === "rm" ? { block: true, reason: "no" } : {}),
    tool_result: (req) => Effect.succeed({ content: req.content.toUpperCase() })
  })
  const reply = (line: string) => Effect.runSync(quiet(respond(line)))

  it("answers any line with exactly one line holding a JSON object", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.string({ unit: "grapheme" })), (raw) => {
        const line = raw.replace(/[\r\n]/g, " ")
        const out = reply(line)
        expect(out.endsWith("\n")).toBe(true)
        expect(out.slice(0, -1)).not.toMatch(/[\r\n]/)
        const parsed: unknown = JSON.parse(out)
        expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)).toBe(true)
      }),
      { numRuns: 1000 }
    )
  })

  it("dispatches by event to the handler and encodes its reply", () => {
    expect(reply(JSON.stringify(toolCall("rm", {})))).toBe('{"block":true,"reason":"no"}\n')
    expect(reply(JSON.stringify(toolCall("ls", {})))).toBe("{}\n")
    expect(reply(JSON.stringify(toolResult("ls", "abc")))).toBe('{"content":"ABC"}\n')
  })

  it("answers {} for no handler, unknown events, non-objects and requests that break the schema", () => {
    expect(reply(JSON.stringify(request("context", { messages: [] })))).toBe("{}\n")
    expect(reply(JSON.stringify(request("tool_calls", { tool: "rm" })))).toBe("{}\n")
    expect(reply("[1,2]")).toBe("{}\n")
    expect(reply("{\"event\":\"tool_call\"")).toBe("{}\n")
    expect(reply(JSON.stringify(request("tool_call", { tool: "rm" })))).toBe("{}\n") // call_id, args missing
  })

  it("drops fields that do not belong to the event and answers {} for a malformed reply", () => {
    const odd = Extension.respond({
      // Deliberately wrong at runtime (the types forbid it): the SDK must not forward it.
      tool_call: (req) => Effect.succeed(JSON.parse(req.tool === "bad" ? '{"keep":"x","block":1}' : '{"keep":[1],"ask":true}')),
      list_tools: () => Effect.succeed({ tools: [{ name: "t", description: "d", input_schema: {} }] }),
      // A cycle cannot be encoded as JSON.
      invoke_tool: () => {
        const result: Record<string, unknown> = {}
        result["self"] = result
        return Effect.succeed({ result })
      }
    })
    const r = (line: unknown) => Effect.runSync(quiet(odd(JSON.stringify(line))))
    expect(r(toolCall("ok", {}))).toBe('{"ask":true}\n')
    expect(r(toolCall("bad", {}))).toBe("{}\n")
    expect(r(request("list_tools"))).toBe('{"tools":[{"name":"t","description":"d","input_schema":{}}]}\n')
    expect(r(request("invoke_tool", { call_id: "c", tool: "t", args: {} }))).toBe("{}\n")
  })

  it("passes round and call_id through to the handler", () => {
    const seen = Extension.respond({
      tool_call: (req) => Effect.succeed({ reason: `${req.call_id}/${req.round ?? 0}` })
    })
    expect(Effect.runSync(seen(JSON.stringify({ ...toolCall("x", {}, "c-9"), round: 2 })))).toBe(
      '{"reason":"c-9/2"}\n'
    )
  })
})

describe("Extension.run (in-process stdio)", () => {
  const handlers: Extension.Handlers = { tool_result: (req) => Effect.succeed({ content: `<${req.content}>` }) }

  it("reassembles lines split across chunks, accepts CRLF, skips blank lines, answers an unterminated last line", async () => {
    const a = JSON.stringify(toolResult("t", "a"))
    const b = JSON.stringify(toolResult("t", "b"))
    const c = JSON.stringify(toolResult("t", "c"))
    const out = await runInProcess(handlers, [a.slice(0, 5), `${a.slice(5)}\r\n\n   \n${b}\n`, "oops\n", c])
    expect(out).toBe('{"content":"<a>"}\n{"content":"<b>"}\n{}\n{"content":"<c>"}\n')
  })

  it("splits a multi-byte character across chunks without corrupting it", async () => {
    const bytes = new TextEncoder().encode(`${JSON.stringify(toolResult("t", "😀é"))}\n`)
    const cut = bytes.indexOf(0xf0) + 2 // inside the 4-byte emoji
    const written: Array<string> = []
    const layer = Stdio.layerTest({
      stdin: Stream.fromIterable([bytes.slice(0, cut), bytes.slice(cut)]),
      stdout: () => Sink.forEach((chunk: string | Uint8Array) => Effect.sync(() => void written.push(String(chunk))))
    })
    await Effect.runPromise(Extension.run(handlers).pipe(Effect.provide(layer), quiet))
    expect(written.join("")).toBe('{"content":"<😀é>"}\n')
  })
})

describe("Extension.main (real child process)", () => {
  it("replies to each request before the next is sent, in order, and exits 0 when stdin closes", async () => {
    const ext = start("node", [sdkExtension])
    expect(await ext.send(toolCall("rm", {}, "c-1"))).toEqual({ block: true, reason: "no" })
    expect(await ext.send(toolCall("ls", { path: "." }, "c-2"))).toEqual({ args: { path: ".", seen: "c-2" } })
    expect(await ext.send(request("session_start"))).toEqual({})
    const done = await ext.close()
    expect(done.code).toBe(0)
    expect(done.stdout).toBe('{"block":true,"reason":"no"}\n{"args":{"path":".","seen":"c-2"}}\n{}\n')
  })

  it("answers {} for unknown events, missing handlers, bad lines and failing handlers; failures go to stderr", async () => {
    const ext = start("node", [sdkExtension])
    ext.write("this is not json\n")
    expect(await ext.next()).toEqual({})
    expect(await ext.send(request("no_such_event", { tool: "rm" }))).toEqual({})
    expect(await ext.send(request("before_compact", { messages: [] }))).toEqual({}) // no handler
    expect(await ext.send(request("tool_call", { tool: "rm" }))).toEqual({}) // missing call_id and args
    expect(await ext.send(toolCall("fail", {}))).toEqual({})
    expect(await ext.send(toolCall("die", {}))).toEqual({})
    expect(await ext.send(toolCall("throw", {}))).toEqual({})
    expect(await ext.send(toolCall("malformed", {}))).toEqual({})
    expect(await ext.send(toolCall("console", {}))).toEqual({})
    expect(await ext.send(toolCall("log", {}))).toEqual({})
    expect(await ext.send(toolCall("rm", {}))).toEqual({ block: true, reason: "no" }) // still alive and in step
    const done = await ext.close()
    expect(done.code).toBe(0)
    expect(done.stderr).toContain("handler failure text: tool fail")
    expect(done.stderr).toContain("handler defect text: tool die")
    expect(done.stderr).toContain("handler threw text: tool throw")
    expect(done.stderr).toContain("console text must go to stderr")
    expect(done.stderr).toContain("logged text must go to stderr")
    // Nothing but the eleven replies on stdout.
    expect(done.stdout).toBe(`${"{}\n".repeat(10)}{"block":true,"reason":"no"}\n`)
  })

  it("logs a reply JSON cannot hold (a BigInt field) to stderr and answers {}", async () => {
    const ext = start("node", [sdkExtension])
    expect(await ext.send(toolCall("bigint", {}))).toEqual({})
    expect(await ext.send(toolCall("rm", {}))).toEqual({ block: true, reason: "no" })
    const done = await ext.close()
    expect(done.code).toBe(0)
    expect(done.stdout).toBe('{}\n{"block":true,"reason":"no"}\n')
    expect(done.stderr).toContain("tool_call: handler returned a malformed reply (sent {} instead): reason: expected string, got 10n")
  })

  it("round-trips unicode and newlines inside strings", async () => {
    const ext = start("node", [sdkExtension])
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), fc.constantFrom("a\nb", "\r\n", "\u2028\u2029", "\\n")),
        async (content) => {
          expect(await ext.send(toolResult("t", content))).toEqual({ content })
        }
      ),
      { numRuns: 1000 }
    )
    expect((await ext.close()).code).toBe(0)
  })

  it("answers a burst of 100 pipelined requests in order", async () => {
    const requests = Array.from({ length: 100 }, (_, i) => toolCall("echo", { i }, `c-${i}`))
    const done = await exchange("node", [sdkExtension], requests)
    expect(done.code).toBe(0)
    expect(done.replies).toEqual(requests.map((_, i) => ({ args: { i, seen: `c-${i}` } })))
  })

  it("delivers large replies whole while the reader lags behind", async () => {
    const big = "x".repeat(1024 * 1024)
    const requests = Array.from({ length: 8 }, (_, i) => toolResult("t", `${i}${big}`, `c-${i}`))
    const done = await exchange("node", [sdkExtension], requests)
    expect(done.code).toBe(0)
    expect(done.replies).toEqual(requests.map((_, i) => ({ content: `${i}${big}` })))
  })

  it("exits 0 at once when stdin closes without any request", async () => {
    const done = await exchange("node", [sdkExtension], [])
    expect(done).toMatchObject({ code: 0, stdout: "" })
  })
})
