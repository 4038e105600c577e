import { makeLineReader } from "@abhed/protocol"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import * as fc from "fast-check"
import * as ExtensionCore from "../src/ExtensionCore.ts"
import * as FakeExtension from "../src/FakeExtension.ts"
import { toolCallRequest } from "./FakeHost.ts"

/**
 * docs/design.md#attribution, over a simulated pipe: the host sends requests, a simulated extension answers them (and
 * writes stray lines: extra replies, banners, replies to old ids), and the bytes reach the host in reads cut at
 * random places, at random moments between writes. Whatever happens, no reply is ever applied to a request that
 * was written after the reply's line was read, and no reply carrying another request's id is ever applied.
 */

type Action =
  | { readonly _tag: "send" }
  | { readonly _tag: "answer"; readonly twice: boolean }
  | { readonly _tag: "stray"; readonly id: "none" | "old" | "next" }
  | { readonly _tag: "read"; readonly bytes: number }
  | { readonly _tag: "yield" }
  | { readonly _tag: "turn" }

const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.constant({ _tag: "send" } as const), weight: 4 },
  { arbitrary: fc.constant({ _tag: "answer", twice: false } as const), weight: 4 },
  { arbitrary: fc.constant({ _tag: "answer", twice: true } as const), weight: 1 },
  { arbitrary: fc.constantFrom("none", "old", "next").map((id) => ({ _tag: "stray", id }) as const), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 80 }).map((bytes) => ({ _tag: "read", bytes }) as const), weight: 6 },
  { arbitrary: fc.constant({ _tag: "yield" } as const), weight: 2 },
  { arbitrary: fc.constant({ _tag: "turn" } as const), weight: 3 }
)

interface Line {
  readonly tag: string
  readonly id: string | undefined
  /** The step at which the host read it (undefined: not read yet). */
  readAt: number | undefined
}

const enc = new TextEncoder()

const scenario = (
  actions: ReadonlyArray<Action>,
  echoIds: boolean,
  pollOnTurn = false,
  replyIds: "optional" | "required" = "optional"
) =>
  Effect.gen(function* () {
    let catchUps = 0
    /** Writes waiting for the event loop's next turn (`catchUp`). */
    let waitingWrites: Array<() => void> = []
    let step = 0
    const written: Array<{ readonly id: string; readonly at: number }> = [] // requests, in write order
    let answered = 0
    const lines = new Map<string, Line>()
    let pipe = new Uint8Array(0)
    const reader = makeLineReader({ maxLineBytes: 1 << 20 })
    const emit = (line: Line) => {
      lines.set(line.tag, line)
      const text = JSON.stringify(line.id === undefined ? { reason: line.tag } : { id: line.id, reason: line.tag })
      const bytes = enc.encode(`${text}\n`)
      const next = new Uint8Array(pipe.length + bytes.length)
      next.set(pipe)
      next.set(bytes, pipe.length)
      pipe = next
    }
    let events: ExtensionCore.TransportEvents | undefined
    /** One read of up to `bytes` from the pipe, attributed by the core there and then. */
    function deliver(bytes: number) {
      const chunk = pipe.subarray(0, bytes)
      pipe = pipe.subarray(chunk.length)
      if (chunk.length === 0) return
      const { lines: read } = reader.read(chunk)
      for (const l of read) {
        if (l._tag === "Json") {
          const tag = String((l.value as { reason?: unknown }).reason)
          const line = lines.get(tag)
          if (line !== undefined) line.readAt = step
        }
      }
      events?.read(read)
    }
    const scope = yield* Scope.make()
    const extension = yield* ExtensionCore.make<never>({
      config: FakeExtension.config("sim", { events: ["tool_call"], reply_ids: replyIds }),
      sessionId: "s",
      connect: (e) =>
        Effect.sync(() => {
          events = e
          const transport: ExtensionCore.Transport = {
            ...ExtensionCore.deadTransport,
            write: (request) => void written.push({ id: request.value.id, at: step }),
            // As the process transport does: the write waits for the event loop's next turn, whose poll reads what
            // is in the pipe by then (or, to check that attribution holds without it, reads nothing).
            catchUp: (then) => {
              catchUps++
              waitingWrites.push(then)
            }
          }
          return transport
        })
    }).pipe(Scope.provide(scope))
    const sends: Array<{
      readonly id: string
      readonly fiber: Fiber.Fiber<{ readonly reason: string | undefined }, unknown>
    }> = []
    // The actions, then a well-behaved tail: answer what is left, in reads of any size, until nothing moves.
    const tail: Array<Action> = Array.from(
      { length: 12 },
      (): ReadonlyArray<Action> => [
        { _tag: "turn" },
        { _tag: "answer", twice: false },
        { _tag: "read", bytes: 1 << 16 },
        { _tag: "yield" }
      ]
    ).flat()
    for (const a of [...actions, ...tail]) {
      step++
      switch (a._tag) {
        case "send": {
          const id = `r${sends.length + 1}`
          const fiber = yield* Effect.forkChild(
            Effect.map(extension.send(toolCallRequest(id)), (r) => ({ reason: r.reply.reason }))
          )
          sends.push({ id, fiber })
          break
        }
        case "answer": {
          // The extension answers the oldest request it has read and not answered (echoing its id, or not).
          const request = written[answered]
          if (request === undefined) break
          answered++
          const copies = a.twice ? 2 : 1
          for (let i = 0; i < copies; i++) {
            emit({ tag: `L${step}.${i}`, id: echoIds ? request.id : undefined, readAt: undefined })
          }
          break
        }
        case "stray": {
          const id = a.id === "none" ? undefined : a.id === "old" ? written[answered - 1]?.id : `r${sends.length + 1}`
          emit({ tag: `S${step}`, id: echoIds ? id : undefined, readAt: undefined })
          break
        }
        case "read":
          deliver(a.bytes)
          break
        case "yield":
          yield* Effect.yieldNow
          break
        case "turn": {
          // The event loop's poll, then the writes that waited for it.
          if (pollOnTurn) deliver(pipe.length)
          const writes = waitingWrites
          waitingWrites = []
          for (const write of writes) write()
          break
        }
      }
      yield* Effect.yieldNow
    }
    let checked = 0
    for (const send of sends) {
      const exit = yield* Fiber.await(send.fiber).pipe(
        Effect.timeoutOption("1 millis"),
        Effect.map((o) => (o._tag === "Some" ? o.value : undefined))
      )
      if (exit === undefined || !Exit.isSuccess(exit)) continue
      const line = lines.get(exit.value.reason ?? "")
      const request = written.find((w) => w.id === send.id)
      expect(line, `reply to ${send.id} is a line the extension wrote`).toBeDefined()
      expect(request).toBeDefined()
      if (line === undefined || request === undefined) continue
      // The line was read after the request was written: never attributed to a later request.
      expect(line.readAt ?? Number.POSITIVE_INFINITY).toBeGreaterThan(request.at)
      // With ids echoed, no reply carrying another id is ever applied; with ids required, none without one.
      if (line.id !== undefined || replyIds === "required") expect(line.id).toBe(send.id)
      checked++
    }
    for (const send of sends) yield* Fiber.interrupt(send.fiber)
    yield* Scope.close(scope, Exit.void)
    // With ids required the core writes at once (no line written earlier can carry the new id).
    if (replyIds === "required") expect(catchUps).toBe(0)
    else expect(catchUps).toBeGreaterThanOrEqual(written.length) // every write waited for the loop's turn
    return checked
  })

describe("attribution over a simulated pipe (docs/design.md#failures)", () => {
  it("no reply is applied to a request written after its line was read; with ids, no mismatched reply", async () => {
    let replied = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 5, maxLength: 40 }),
        fc.boolean(),
        fc.boolean(),
        async (actions, echoIds, pending) => {
          replied += await Effect.runPromise(scenario(actions, echoIds, pending))
        }
      ),
      { numRuns: 1000 }
    )
    // The property is not vacuous: many replies were applied and checked.
    expect(replied).toBeGreaterThan(500)
  })

  it("with reply_ids required (written at once, no turn of the loop first): only a line with the request's own id is applied", async () => {
    let replied = 0
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 5, maxLength: 40 }), fc.boolean(), async (actions, echoIds) => {
        replied += await Effect.runPromise(scenario(actions, echoIds, false, "required"))
      }),
      { numRuns: 1000 }
    )
    expect(replied).toBeGreaterThan(250)
  })

  it("a stray line before a request is written is never that request's reply (the old late attribution did this)", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        // A stray line read with nothing in flight, then a request, then its real reply: the extension is dead at
        // the stray line, and the request fails without a reply rather than take the stray one.
        const checked = yield* scenario(
          [
            { _tag: "stray", id: "none" },
            { _tag: "read", bytes: 80 },
            { _tag: "send" },
            { _tag: "answer", twice: false },
            { _tag: "read", bytes: 80 }
          ],
          false
        )
        expect(checked).toBe(0)
      })
    ))

  it("a stray line already in the pipe when a request is begun is read by the poll before the write: never applied", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        // The stray line is written, unread (the event loop is held up); then a request is begun. Its write waits for
        // the loop's next poll, which reads the stray line with nothing in flight: the extension dies, the request is
        // never written. Without that poll the stray line would be the first read after the write: applied.
        const steps: ReadonlyArray<Action> = [
          { _tag: "stray", id: "none" },
          { _tag: "send" },
          { _tag: "turn" },
          { _tag: "read", bytes: 80 },
          { _tag: "answer", twice: false },
          { _tag: "read", bytes: 80 }
        ]
        expect(yield* scenario(steps, false, true)).toBe(0)
        expect(yield* scenario(steps, false, false)).toBe(1)
      })
    ))

  it.effect(
    "reply ids: the id in flight is accepted, another id kills (never applied), reply_ids required needs one",
    () =>
      Effect.gen(function* () {
        const echo = yield* FakeExtension.fromReplies("echo", { tool_call: (r) => ({ id: r.id, block: true }) })
        expect((yield* echo.send(toolCallRequest("7"))).reply).toEqual({ block: true })

        const wrong = yield* FakeExtension.fromReplies("wrong", { tool_call: () => ({ id: "6", block: true }) })
        const error = yield* Effect.flip(wrong.send(toolCallRequest("7")))
        expect(error._tag).toBe("UnsolicitedOutput")
        expect(error.message).toBe(
          `wrong: unsolicited output (a line no request in flight can own): reply to id "6" while "7" was in flight`
        )
        expect((yield* wrong.status).state).toEqual({
          _tag: "dead",
          cause: { _tag: "unsolicited_output", detail: `reply to id "6" while "7" was in flight` }
        })

        const required = yield* FakeExtension.fromReplies(
          "required",
          { tool_call: () => ({ block: true }) },
          { reply_ids: "required" }
        )
        const missing = yield* Effect.flip(required.send(toolCallRequest("7")))
        expect(missing._tag === "MalformedReply" && [missing.path, missing.got]).toEqual(["id", "nothing"])
        const nullId = yield* FakeExtension.fromReplies(
          "null-id",
          { tool_call: () => ({ id: null }) },
          { reply_ids: "required" }
        )
        expect((yield* Effect.flip(nullId.send(toolCallRequest("7"))))._tag).toBe("MalformedReply")
      })
  )
})
