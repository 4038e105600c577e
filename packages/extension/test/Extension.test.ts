import { Extension } from "@abhed/extension"
import { EffectExtension } from "@abhed/extension/effect"
import { Effect, References, Sink, Stream } from "effect"
import * as Stdio from "effect/Stdio"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { exchange, fixtures, request, start, toolCall, toolResult } from "./ExtensionProcess.ts"

const sdkExtension = `${fixtures}sdk-extension.ts`
const plainExtension = `${fixtures}plain-extension.ts`
const noopExtension = `${fixtures}noop-extension.ts`
const traceImports = `${fixtures}trace-imports.mjs`

/** In-process runs log their (expected) warnings nowhere, to keep the test output readable. */
const quiet = <A, E>(effect: Effect.Effect<A, E>) => Effect.provideService(effect, References.MinimumLogLevel, "None")

/** Run `EffectExtension.run` in-process over the given stdin chunks; returns everything written to stdout. */
const runInProcess = (handlers: EffectExtension.Handlers, chunks: ReadonlyArray<string>): Promise<string> => {
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
  return Effect.runPromise(EffectExtension.run(handlers).pipe(Effect.provide(layer), quiet)).then(() =>
    written.join("")
  )
}

/** The SDK's reply when a handler's code failed on a request (docs/extensions.md), and when it returned no reply. */
const handlerFailed = (event: string) =>
  JSON.stringify({ failed: `the ${event} handler failed (its error is on the extension's stderr)` })
const notAReply = (event: string) =>
  JSON.stringify({
    failed: `the ${event} handler returned what is not a reply (its error is on the extension's stderr)`
  })

describe("EffectExtension.respond (in-process)", () => {
  const respond = EffectExtension.respond({
    tool_call: (req) => Effect.succeed(req.tool === "rm" ? { block: true, reason: "no" } : {}),
    tool_result: (req) => Effect.succeed({ content: req.content.toUpperCase() })
  })
  const reply = (line: string) => Effect.runPromise(quiet(respond(line)))

  it("answers any line with exactly one line holding a JSON object, or stops at a line it cannot read", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.json(), fc.string({ unit: "grapheme" })), async (raw) => {
        const line = raw.replace(/[\r\n]/g, " ")
        const answered = await Effect.runPromise(quiet(Effect.result(respond(line))))
        if (answered._tag === "Failure") {
          expect(answered.failure).toMatchObject({ _tag: "UnreadableRequest" })
          expect(answered.failure.reason).not.toMatch(/[\r\n]/) // one line: the host shows it as the cause
          return
        }
        const out = answered.success
        expect(out.endsWith("\n")).toBe(true)
        expect(out.slice(0, -1)).not.toMatch(/[\r\n]/)
        const parsed: unknown = JSON.parse(out)
        expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)).toBe(true)
      }),
      { numRuns: 1000 }
    )
  })

  it("dispatches by event to the handler and encodes its reply", async () => {
    expect(await reply(JSON.stringify(toolCall("rm", {})))).toBe('{"block":true,"reason":"no"}\n')
    expect(await reply(JSON.stringify(toolCall("ls", {})))).toBe("{}\n")
    expect(await reply(JSON.stringify(toolResult("ls", "abc")))).toBe('{"content":"ABC"}\n')
  })

  it("answers {} for no handler and unknown events, without reading their fields", async () => {
    expect(await reply(JSON.stringify(request("context", { messages: [] })))).toBe("{}\n")
    expect(await reply(JSON.stringify(request("tool_calls", { tool: "rm" })))).toBe("{}\n")
    expect(await reply(JSON.stringify(request("toString", { tool: "rm" })))).toBe("{}\n")
    expect(await reply(JSON.stringify(request("before_compact", { messages: "not an array" })))).toBe("{}\n")
  })

  it("fails with UnreadableRequest, and no reply, for a line that is not a request it can read", async () => {
    const unreadable = (line: string) => Effect.runPromise(quiet(Effect.flip(respond(line))))
    // A guard that cannot read a tool_call must not pass it as no opinion: the host applies its on_failure.
    const missing = await unreadable(JSON.stringify(request("tool_call", { tool: "rm" }))) // call_id, args missing
    expect(missing).toMatchObject({ _tag: "UnreadableRequest" })
    expect(missing.reason).toMatch(/^cannot read a request: tool_call: request does not match the protocol: /)
    expect(missing.reason).toContain("stopping so that the host applies this extension's on_failure")
    expect((await unreadable("[1,2]")).reason).toContain("request is not a JSON object")
    expect((await unreadable('{"event":"tool_call"')).reason).toContain("request is not JSON")
    expect((await unreadable('{"tool":"rm"}')).reason).toContain('request has no "event" string')
  })

  it("drops fields that do not belong to the event and answers failed for a malformed reply", async () => {
    const odd = EffectExtension.respond({
      // Deliberately wrong at runtime (the types forbid it): the SDK must not forward it.
      tool_call: (req) =>
        Effect.succeed(JSON.parse(req.tool === "bad" ? '{"keep":"x","block":1}' : '{"keep":[1],"ask":true}')),
      list_tools: () => Effect.succeed({ tools: [{ name: "t", description: "d", input_schema: {} }] }),
      // A cycle cannot be encoded as JSON.
      invoke_tool: () => {
        const result: Record<string, unknown> = {}
        result["self"] = result
        return Effect.succeed({ result })
      }
    })
    const r = (line: unknown) => Effect.runPromise(quiet(odd(JSON.stringify(line))))
    expect(await r(toolCall("ok", {}))).toBe('{"ask":true}\n')
    expect(await r(toolCall("bad", {}))).toBe(`${notAReply("tool_call")}\n`)
    expect(await r(request("list_tools"))).toBe('{"tools":[{"name":"t","description":"d","input_schema":{}}]}\n')
    expect(await r(request("invoke_tool", { call_id: "c", tool: "t", args: {} }))).toBe(`${notAReply("invoke_tool")}\n`)
  })

  it("passes round and call_id through to the handler", async () => {
    const seen = EffectExtension.respond({
      tool_call: (req) => Effect.succeed({ reason: `${req.call_id}/${req.round ?? 0}` })
    })
    expect(await Effect.runPromise(seen(JSON.stringify({ ...toolCall("x", {}, "c-9"), round: 2 })))).toBe(
      '{"reason":"c-9/2"}\n'
    )
  })
})

describe("a handler that returns nothing (in-process)", () => {
  it("is no opinion, {}: a plain JavaScript handler's bare return, a Promise or an Effect of nothing, null", async () => {
    const logged: Array<string> = []
    // What a plain JavaScript author writes (the types ask for a reply; JavaScript does not check them).
    const nothing = (tool: string): never =>
      (tool === "promise"
        ? Promise.resolve(undefined)
        : tool === "effect"
          ? Effect.succeed(undefined)
          : tool === "null"
            ? null
            : undefined) as never
    const respond = Extension.respond(
      { tool_call: (req) => (req.tool === "rm" ? { block: true, reason: "no" } : nothing(req.tool)) },
      (_, message) => void logged.push(message)
    )
    for (const tool of ["bare", "promise", "effect", "null"])
      expect(await respond(JSON.stringify({ ...toolCall(tool, {}), id: 1 })), tool).toBe('{"id":1}\n')
    expect(await respond(JSON.stringify(toolCall("rm", {})))).toBe('{"block":true,"reason":"no"}\n')
    expect(logged).toEqual([])
  })
})

describe("Extension.respond (in-process, handlers with or without Effect)", () => {
  const logged: Array<string> = []
  const respond = Extension.respond(
    {
      tool_call: (req) =>
        req.tool === "plain"
          ? { block: true, reason: "plain" }
          : req.tool === "promise"
            ? Promise.resolve({ reason: "promise" })
            : req.tool === "effect"
              ? Effect.succeed({ reason: "effect" })
              : req.tool === "reject"
                ? Promise.reject(new Error("rejected on purpose"))
                : req.tool === "fail"
                  ? Effect.fail("failed on purpose")
                  : (() => {
                      throw new Error("thrown on purpose")
                    })(),
      // Deliberately the wrong shape at runtime (the types forbid it).
      tool_result: () => JSON.parse('{"content":"x","is_error":"yes"}')
    },
    (level, message) => void logged.push(`${level}: ${message}`)
  )
  const call = (tool: string, extra: object = {}) => respond(JSON.stringify({ ...toolCall(tool, {}), ...extra }))

  it("takes a plain value, a Promise or an Effect", async () => {
    expect(await call("plain")).toBe('{"block":true,"reason":"plain"}\n')
    expect(await call("promise")).toBe('{"reason":"promise"}\n')
    expect(await call("effect")).toBe('{"reason":"effect"}\n')
  })

  it("answers failed for a throw, a rejection, a failing Effect and a malformed plain reply", async () => {
    logged.length = 0
    expect(await call("throw")).toBe(`${handlerFailed("tool_call")}\n`)
    expect(await call("reject")).toBe(`${handlerFailed("tool_call")}\n`)
    expect(await call("fail")).toBe(`${handlerFailed("tool_call")}\n`)
    expect(await respond(JSON.stringify(toolResult("t", "a")))).toBe(`${notAReply("tool_result")}\n`)
    expect(logged).toEqual([
      expect.stringMatching(/^Error: tool_call: handler failed \(sent "failed"\): Error: thrown on purpose/),
      expect.stringMatching(/^Error: tool_call: handler failed \(sent "failed"\): Error: rejected on purpose/),
      expect.stringMatching(/^Error: tool_call: handler failed \(sent "failed"\): Error: failed on purpose/),
      expect.stringMatching(
        /^Error: tool_result: handler returned a malformed reply \(sent "failed" instead\): is_error/
      )
    ])
  })

  it("rejects with UnreadableRequest for a request main would stop at, the handler not called", async () => {
    await expect(respond(JSON.stringify({ ...toolCall("plain", {}), args: "rm -rf /" }))).rejects.toMatchObject({
      _tag: "UnreadableRequest",
      reason: expect.stringContaining("tool_call: request does not match the protocol")
    })
    await expect(respond("{")).rejects.toMatchObject({ _tag: "UnreadableRequest" })
  })

  it("echoes the request's id, as the JSON value it was, on every reply", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.constantFrom("plain", "effect", "throw", "unknown"), async (id, tool) => {
        const line =
          tool === "unknown"
            ? JSON.stringify({ ...request("no_such_event"), id })
            : JSON.stringify({ ...toolCall(tool, {}), id })
        const reply: unknown = JSON.parse(await respond(line))
        // JSON has no -0: the id goes over the wire as text, so the host sees 0.
        expect(reply).toEqual(expect.objectContaining({ id: JSON.parse(JSON.stringify(id)) }))
      }),
      { numRuns: 1000 }
    )
    expect(await call("plain", { id: "r-1" })).toBe('{"block":true,"reason":"plain","id":"r-1"}\n')
    expect(await respond(JSON.stringify({ ...request("before_compact", { messages: [] }), id: 7 }))).toBe('{"id":7}\n')
    expect(await call("plain")).not.toContain('"id"') // no id in the request, none in the reply
  })
})

describe("EffectExtension.run (in-process stdio)", () => {
  const handlers: EffectExtension.Handlers = { tool_result: (req) => Effect.succeed({ content: `<${req.content}>` }) }

  it("reassembles lines split across chunks, accepts CRLF, skips blank lines, answers an unterminated last line", async () => {
    const a = JSON.stringify(toolResult("t", "a"))
    const b = JSON.stringify(toolResult("t", "b"))
    const c = JSON.stringify(toolResult("t", "c"))
    const out = await runInProcess(handlers, [a.slice(0, 5), `${a.slice(5)}\r\n\n   \n${b}\n`, c])
    expect(out).toBe('{"content":"<a>"}\n{"content":"<b>"}\n{"content":"<c>"}\n')
  })

  it("stops at a line it cannot read: the replies before it are out, none for it or after, UnreadableRequest", async () => {
    const a = JSON.stringify(toolResult("t", "a"))
    await expect(runInProcess(handlers, [`${a}\noops\n${a}\n`])).rejects.toMatchObject({
      _tag: "UnreadableRequest",
      reason: expect.stringContaining("request is not JSON")
    })
    const written: Array<string> = []
    const layer = Stdio.layerTest({
      stdin: Stream.make(new TextEncoder().encode(`${a}\noops\n${a}\n`)),
      stdout: () => Sink.forEach((chunk: string | Uint8Array) => Effect.sync(() => void written.push(String(chunk))))
    })
    const exit = await Effect.runPromiseExit(EffectExtension.run(handlers).pipe(Effect.provide(layer), quiet))
    expect(exit._tag).toBe("Failure")
    expect(written.join("")).toBe('{"content":"<a>"}\n')
  })

  it("the global console goes to stderr while it serves (a handler's console.log would end the extension), and is put back", async () => {
    const original = globalThis.console
    let inHandler: Console | undefined
    const out = await runInProcess(
      {
        tool_call: () => {
          inHandler = globalThis.console
          return {}
        }
      },
      [`${JSON.stringify(toolCall("a", {}))}\n`]
    )
    expect(out).toBe("{}\n")
    expect(inHandler).toBeDefined()
    expect(inHandler).not.toBe(original)
    expect(globalThis.console).toBe(original)
  })

  it("splits a multi-byte character across chunks without corrupting it", async () => {
    const bytes = new TextEncoder().encode(`${JSON.stringify(toolResult("t", "😀é"))}\n`)
    const cut = bytes.indexOf(0xf0) + 2 // inside the 4-byte emoji
    const written: Array<string> = []
    const layer = Stdio.layerTest({
      stdin: Stream.fromIterable([bytes.slice(0, cut), bytes.slice(cut)]),
      stdout: () => Sink.forEach((chunk: string | Uint8Array) => Effect.sync(() => void written.push(String(chunk))))
    })
    await Effect.runPromise(EffectExtension.run(handlers).pipe(Effect.provide(layer), quiet))
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

  it("answers {} for unknown events and missing handlers, failed for failing handlers; failures go to stderr", async () => {
    const ext = start("node", [sdkExtension])
    expect(await ext.send(request("no_such_event", { tool: "rm" }))).toEqual({})
    expect(await ext.send(request("before_compact", { messages: [] }))).toEqual({}) // no handler
    expect(await ext.send(toolCall("fail", {}))).toEqual(JSON.parse(handlerFailed("tool_call")))
    expect(await ext.send(toolCall("die", {}))).toEqual(JSON.parse(handlerFailed("tool_call")))
    expect(await ext.send(toolCall("throw", {}))).toEqual(JSON.parse(handlerFailed("tool_call")))
    expect(await ext.send(toolCall("malformed", {}))).toEqual(JSON.parse(notAReply("tool_call")))
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
    // Nothing but the nine replies on stdout.
    expect(done.stdout).toBe(
      `{}\n{}\n${handlerFailed("tool_call")}\n${handlerFailed("tool_call")}\n${handlerFailed("tool_call")}\n${notAReply("tool_call")}\n{}\n{}\n{"block":true,"reason":"no"}\n`
    )
  })

  for (const [what, bad] of [
    ["a tool_call missing call_id and args", JSON.stringify(request("tool_call", { tool: "rm" }))],
    ["a line that is not JSON", "this is not json"]
  ] as const) {
    it(`stops at ${what}: no reply (a guard must not pass it as no opinion), the reason last on stderr, exit 1`, async () => {
      const ext = start("node", [sdkExtension])
      expect(await ext.send(toolCall("rm", {}))).toEqual({ block: true, reason: "no" })
      ext.write(`${bad}\n${JSON.stringify(toolCall("rm", {}))}\n`)
      const done = await ext.close()
      expect(done.code).toBe(1)
      expect(done.stdout).toBe('{"block":true,"reason":"no"}\n')
      // The host shows the last line of stderr as the cause of the extension's death.
      expect(done.stderr.trimEnd().split("\n").at(-1)).toMatch(
        /^abhed-extension error: cannot read a request: .*stopping so that the host applies this extension's on_failure$/
      )
    })
  }

  it("takes plain and Promise handlers; throws and rejections are answered failed and logged; prints go to stderr", async () => {
    const ext = start("node", [plainExtension])
    expect(await ext.send(toolCall("rm", {}, "c-1"))).toEqual({ block: true, reason: "no" })
    expect(await ext.send(toolCall("ls", { path: "." }, "c-2"))).toEqual({ args: { path: ".", later: true } })
    expect(await ext.send(toolResult("t", "abc"))).toEqual({ content: "ABC" })
    expect(await ext.send(toolCall("throw", {}))).toEqual(JSON.parse(handlerFailed("tool_call")))
    expect(await ext.send(toolCall("reject", {}))).toEqual(JSON.parse(handlerFailed("tool_call")))
    expect(await ext.send(toolCall("print", {}))).toEqual({})
    expect(await ext.send({ ...toolCall("rm", {}), id: { n: 1 } })).toEqual({ block: true, reason: "no", id: { n: 1 } })
    const done = await ext.close()
    expect(done.code).toBe(0)
    expect(done.stdout).toBe(
      `{"block":true,"reason":"no"}\n{"args":{"path":".","later":true}}\n{"content":"ABC"}\n${handlerFailed("tool_call")}\n${handlerFailed("tool_call")}\n{}\n` +
        '{"block":true,"reason":"no","id":{"n":1}}\n'
    )
    expect(done.stderr).toContain("plain handler threw: tool throw")
    expect(done.stderr).toContain("plain handler rejected: tool reject")
    expect(done.stderr).toContain("console.log text must go to stderr")
    expect(done.stderr).toContain("stdout.write text must go to stderr")
  })

  it("loads nothing from effect or the protocol when no handler runs", async () => {
    const done = await exchange(
      "node",
      ["--import", traceImports, noopExtension],
      [request("session_start"), toolCall("rm", {})]
    )
    expect(done.code).toBe(0)
    expect(done.replies).toEqual([{}, {}])
    expect(done.stderr).not.toContain("trace: import")
  })

  it("checks plain handlers' requests and replies without loading effect (nor the protocol's index)", async () => {
    const done = await exchange(
      "node",
      ["--import", traceImports, plainExtension],
      [toolCall("rm", {}), toolResult("t", "abc"), toolCall("ls", { path: "." })]
    )
    expect(done.code).toBe(0)
    expect(done.replies).toEqual([
      { block: true, reason: "no" },
      { content: "ABC" },
      { args: { path: ".", later: true } }
    ])
    expect(done.stderr).toContain("trace: import @abhed/protocol/RequestCheck")
    expect(done.stderr).not.toMatch(/^trace: import effect/m)
    expect(done.stderr).not.toMatch(/^trace: import @abhed\/protocol$/m)
  })

  it("loads the protocol's Schema to say why a request does not match it, and stops without a reply", async () => {
    const done = await exchange(
      "node",
      ["--import", traceImports, plainExtension],
      [toolCall("rm", {}), { ...toolCall("rm", {}), round: 1.5 }, toolCall("rm", {})]
    )
    expect(done.code).toBe(1)
    expect(done.replies).toEqual([{ block: true, reason: "no" }])
    expect(done.stderr).toContain("trace: import effect/Schema")
    expect(done.stderr).toContain('tool_call: request does not match the protocol: Expected an integer; at ["round"]')
  })

  it("logs a reply JSON cannot hold (a BigInt field) to stderr and answers failed", async () => {
    const ext = start("node", [sdkExtension])
    expect(await ext.send(toolCall("bigint", {}))).toEqual(JSON.parse(notAReply("tool_call")))
    expect(await ext.send(toolCall("rm", {}))).toEqual({ block: true, reason: "no" })
    const done = await ext.close()
    expect(done.code).toBe(0)
    expect(done.stdout).toBe(`${notAReply("tool_call")}\n{"block":true,"reason":"no"}\n`)
    expect(done.stderr).toContain(
      `tool_call: handler returned a malformed reply (sent "failed" instead): reason: expected JSON (a BigInt is not), got a BigInt`
    )
  })

  it("round-trips unicode and newlines inside strings", async () => {
    const ext = start("node", [sdkExtension])
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: "grapheme" }),
          fc.string({ unit: "binary" }),
          fc.constantFrom("a\nb", "\r\n", "\u2028\u2029", "\\n")
        ),
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
