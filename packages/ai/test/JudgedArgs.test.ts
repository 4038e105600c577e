import { GuardedToolkit, ScriptedModel } from "@abhed/ai"
import { Approval, AuditLog, ExtensionHost, FakeExtension } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema, Stream } from "effect"
import { LanguageModel, Tool, Toolkit } from "effect/ai"
import * as JsonForm from "../src/JsonForm.ts"

/**
 * The handler runs on exactly the args the guard judged. The host sends args as JSON text, and JSON writes some
 * values as others (`-0` as `0`, a field holding `undefined` not at all, a `Date` as its `toJSON`): the handler gets
 * what the text reads back as, never the value the extensions were not shown.
 */

const Scale = Tool.make("scale", { parameters: Schema.Struct({ n: Schema.Number }), success: Schema.String })
const Open = Tool.make("open", {
  parameters: Schema.Struct({ path: Schema.String, mode: Schema.optional(Schema.String) }),
  success: Schema.String
})
const At = Tool.make("at", { parameters: Schema.Struct({ when: Schema.Date }), success: Schema.String })
const Tools = Toolkit.make(Scale, Open, At)

/** What each handler was handed, as it was handed it. */
const got: Array<unknown> = []
const handlers = Tools.toLayer({
  scale: (params) => Effect.sync(() => (got.push(params), "scaled")),
  open: (params) => Effect.sync(() => (got.push(params), "opened")),
  at: (params) => Effect.sync(() => (got.push(params), "done"))
})

/** A guard that reads the request as an extension process does (its JSON text), and keeps what it read. */
const makeGuard = () => {
  const read: Array<string> = []
  const fake = FakeExtension.fromReplies("guard", {
    tool_call: (req) => {
      read.push(JSON.stringify(req.args))
      return {}
    }
  })
  return { read, fake }
}

const host = (fakes: Parameters<typeof ExtensionHost.layerFake>[0]) =>
  ExtensionHost.layerFake(fakes, { sessionId: "s" }).pipe(Layer.provideMerge(AuditLog.layerMemory))

describe("the handler runs on the args the guard judged", () => {
  const guard = makeGuard()
  it.effect("a model's -0: the guard reads 0, and the handler gets 0, not -0", () =>
    Effect.gen(function* () {
      got.length = 0
      const model = yield* ScriptedModel.make([
        () => [ScriptedModel.toolCall("m1", "scale", JSON.parse('{"n":-0}')), ScriptedModel.finish("tool-calls")]
      ])
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      assert.isFalse(response.toolResults[0]?.isFailure)
      assert.deepStrictEqual(guard.read, ['{"n":0}'])
      assert.strictEqual(got.length, 1)
      const n = (got[0] as { readonly n: number }).n
      assert.isTrue(Object.is(n, 0), `the handler got ${Object.is(n, -0) ? "-0" : String(n)}`)
    }).pipe(Effect.provide(handlers), Effect.provide(host([guard.fake])))
  )

  const asker = FakeExtension.fromReplies("asker", { tool_call: () => ({ ask: true, reason: "sure?" }) })
  it.effect("an asked -0: the Approver is shown 0, and the approved call runs with 0", () =>
    Effect.gen(function* () {
      got.length = 0
      const model = yield* ScriptedModel.make([
        () => [ScriptedModel.toolCall("m2", "scale", JSON.parse('{"n":-0}')), ScriptedModel.finish("tool-calls")]
      ])
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      const shown: Array<unknown> = []
      yield* GuardedToolkit.resolveApprovals(toolkit, response.content).pipe(
        Effect.provide(Approval.Approver.layer((request) => Effect.sync(() => (shown.push(request.args), true))))
      )
      assert.strictEqual(got.length, 1)
      assert.isTrue(Object.is((got[0] as { readonly n: number }).n, 0))
      assert.isTrue(Object.is((shown[0] as { readonly n: number }).n, 0))
    }).pipe(Effect.provide(handlers), Effect.provide(host([asker])))
  )

  const fieldGuard = makeGuard()
  it.effect("a field holding undefined, which the guard never reads: the handler does not get it either", () =>
    Effect.gen(function* () {
      got.length = 0
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const results = yield* toolkit
        .handle("open", { path: "notes.txt", mode: undefined }, "d1")
        .pipe(Effect.flatMap(Stream.runCollect))
      assert.isFalse(results[0]?.isFailure)
      assert.deepStrictEqual(fieldGuard.read, ['{"path":"notes.txt"}'])
      assert.strictEqual(got.length, 1)
      assert.deepStrictEqual(Object.keys(got[0] as object), ["path"])
    }).pipe(Effect.provide(handlers), Effect.provide(host([fieldGuard.fake])))
  )

  const dateGuard = makeGuard()
  it.effect("args whose JSON form the tool does not take (a Date, read as a string): refused, never run", () =>
    Effect.gen(function* () {
      got.length = 0
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const when = new Date("2026-01-01T00:00:00Z")
      const results = yield* toolkit.handle("at", { when }, "d2").pipe(Effect.flatMap(Stream.runCollect))
      assert.deepStrictEqual(got, [])
      assert.deepStrictEqual(dateGuard.read, [])
      assert.isTrue(results[0]?.isFailure)
      assert.include(String(JSON.stringify(results[0]?.encodedResult)), "as JSON, what the extensions read")
    }).pipe(Effect.provide(handlers), Effect.provide(host([dateGuard.fake])))
  )
})

/**
 * Args whose reads can differ (a getter, a Proxy) or that hold what JSON leaves out (a non-enumerable property): the
 * handler gets the copy read back from the one text the guard was shown, never the object that answered the guard.
 * Such args reach the bridge through a parameter Schema that keeps a value as it is (`Schema.Unknown`).
 */
const Exec = Tool.make("exec", { parameters: Schema.Struct({ spec: Schema.Unknown }), success: Schema.String })
const ExecTools = Toolkit.make(Exec)
const ran: Array<unknown> = []
const execHandlers = ExecTools.toLayer({
  exec: ({ spec }) =>
    Effect.sync(() => {
      const s = spec as { readonly command?: unknown; readonly hidden?: unknown }
      ran.push({ command: s.command, hidden: s.hidden })
      return "ran"
    })
})

describe("args that answer each read as they like", () => {
  const cases: ReadonlyArray<readonly [string, () => unknown]> = [
    [
      "a getter that answers each read anew",
      () => {
        let reads = 0
        return {
          get command() {
            reads++
            return `cmd-${reads}`
          }
        }
      }
    ],
    [
      "a Proxy whose get trap answers each read anew",
      () => {
        let reads = 0
        return new Proxy(
          { command: "cmd" },
          {
            get: (target, key) => {
              if (key !== "command") return Reflect.get(target, key)
              reads++
              return `cmd-${reads}`
            }
          }
        )
      }
    ],
    ["a property JSON leaves out", () => Object.defineProperty({ command: "ls" }, "hidden", { value: "rm -rf /" })]
  ]
  for (const [name, make] of cases) {
    const guard = makeGuard()
    it.effect(`${name}: the handler runs on exactly what the guard read`, () =>
      Effect.gen(function* () {
        ran.length = 0
        const toolkit = yield* GuardedToolkit.guard(ExecTools)
        const results = yield* toolkit.handle("exec", { spec: make() }, "g1").pipe(Effect.flatMap(Stream.runCollect))
        assert.isFalse(results[0]?.isFailure)
        assert.strictEqual(guard.read.length, 1)
        const judged = JSON.parse(guard.read[0] ?? "null") as { readonly spec: { readonly command: unknown } }
        assert.deepStrictEqual(ran, [{ command: judged.spec.command, hidden: undefined }])
      }).pipe(Effect.provide(execHandlers), Effect.provide(host([guard.fake])))
    )
  }
})

describe("JsonForm: what the extensions read", () => {
  it("values JSON writes as themselves are kept as they are (no copy); the others are read back from their text", () => {
    const plain = { path: "a\ud800", n: [1, 2.5, -1, 1e21], nested: { ok: true, none: null }, ["__proto__"]: 1 }
    const same = JsonForm.jsonForm(plain)
    assert.strictEqual(same._tag, "same")
    assert.strictEqual(same._tag === "same" ? same.value : undefined, plain)
    class Point {
      readonly x: number
      constructor(x: number) {
        this.x = x
      }
    }
    const changed: ReadonlyArray<readonly [unknown, unknown]> = [
      [-0, 0],
      [{ n: [-0] }, { n: [0] }],
      [{ a: undefined, b: 1 }, { b: 1 }],
      [
        [undefined, () => 1, Symbol("s")],
        [null, null, null]
      ],
      // A hole in a sparse array.
      [new Array<number>(2).fill(1, 1), [null, 1]],
      [{ at: new Date(0) }, { at: "1970-01-01T00:00:00.000Z" }],
      [{ m: new Map([["k", 1]]) }, { m: {} }],
      [{ p: new Point(1) }, { p: { x: 1 } }],
      [{ t: { toJSON: () => "shown", real: "hidden" } }, { t: "shown" }],
      // Read by a getter, through a Proxy, or kept where JSON does not look: written once and read back.
      [
        {
          get c() {
            return "x"
          }
        },
        { c: "x" }
      ],
      [{ a: new Proxy({ c: "x" }, {}) }, { a: { c: "x" } }],
      [Object.defineProperty({ c: "x" }, "hidden", { value: "rm", enumerable: false }), { c: "x" }],
      [{ c: "x", [Symbol("s")]: "rm" }, { c: "x" }],
      [Object.assign(["x"], { extra: "rm" }), ["x"]],
      [Object.defineProperty(["x"], 0, { get: () => "x", enumerable: true }), ["x"]]
    ]
    const zero = JsonForm.jsonForm(-0)
    assert.isTrue(zero._tag === "changed" && Object.is(zero.value, 0))
    for (const [value, read] of changed) {
      const form = JsonForm.jsonForm(value)
      assert.strictEqual(form._tag, "changed")
      assert.deepStrictEqual(form._tag === "changed" ? form.value : undefined, read)
    }
    const throws = JsonForm.jsonForm({
      t: {
        toJSON: () => {
          throw new Error("no")
        }
      }
    })
    assert.strictEqual(throws._tag, "unwritable")
    // A cycle ends the walk at the host's depth bound (never a hang): left as it is, for the host to refuse.
    const cycle: { self?: unknown } = {}
    cycle.self = cycle
    assert.strictEqual(JsonForm.jsonForm(cycle)._tag, "same")
  })
})
