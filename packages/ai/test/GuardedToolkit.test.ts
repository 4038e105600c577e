import { GuardedToolkit, ScriptedModel } from "@abhed/ai"
import { AuditLog, ExtensionHost, FakeExtension } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { LanguageModel, Prompt, Tool, Toolkit } from "effect/ai"

/** Every rule of the guarded toolkit, over in-process fakes and a scripted model (no processes, no network). */

const Read = Tool.make("read", {
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String
})
const Count = Tool.make("count", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.Struct({ words: Schema.Number, sample: Schema.String })
})
const Echo = Tool.make("echo", { parameters: Schema.String, success: Schema.String })
const Tools = Toolkit.make(Read, Count, Echo)

const ran: Array<string> = []
const handlers = Tools.toLayer({
  read: ({ path }) => Effect.sync(() => (ran.push(`read ${path}`), `contents of ${path}: AKIAABCDEFGHIJKLMNOP`)),
  count: ({ text }) => Effect.sync(() => (ran.push(`count ${text}`), { words: text.split(" ").length, sample: text })),
  echo: (text) => Effect.sync(() => (ran.push(`echo ${text}`), text))
})

const host = (fakes: Parameters<typeof ExtensionHost.layerFake>[0]) =>
  ExtensionHost.layerFake(fakes, { sessionId: "s" }).pipe(Layer.provideMerge(AuditLog.layerMemory))

/** One model turn calling `tool` with `params`, then the model stops. Returns the tool result part. */
const callOnce = (tool: string, params: unknown) =>
  Effect.gen(function*() {
    ran.length = 0
    const model = yield* ScriptedModel.make([() => [ScriptedModel.toolCall("t1", tool, params), ScriptedModel.finish("tool-calls")]])
    const toolkit = yield* GuardedToolkit.guard(Tools)
    const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
      Effect.provideService(LanguageModel.LanguageModel, model)
    )
    const result = response.toolResults[0]
    assert.isDefined(result)
    return { result, response }
  }).pipe(Effect.provide(handlers))

describe("GuardedToolkit", () => {
  it.effect("a deny never runs the tool; the model reads the reasons as execution-denied", () =>
    Effect.gen(function*() {
      const { result } = yield* callOnce("read", { path: "secret.txt" })
      assert.deepStrictEqual(ran, [])
      assert.isTrue(result.isFailure)
      assert.deepStrictEqual(result.encodedResult, { type: "execution-denied", reason: "guard: no secrets" })
    }).pipe(Effect.provide(host([
      FakeExtension.fromReplies("guard", {
        tool_call: (req) => (String(req.args["path"]).includes("secret") ? { block: true, reason: "no secrets" } : {})
      })
    ]))))

  it.effect("an allowed call runs with the settled args and its result is redacted", () =>
    Effect.gen(function*() {
      const { result } = yield* callOnce("read", { path: "notes.txt" })
      assert.deepStrictEqual(ran, ["read /sandbox/notes.txt"])
      assert.isFalse(result.isFailure)
      assert.strictEqual(result.result, "contents of /sandbox/notes.txt: [redacted]")
      const audit = yield* AuditLog.use((a) => a.entries)
      assert.deepStrictEqual(audit.map((r) => r.event), ["session_start", "list_tools", "tool_call", "tool_result"])
      assert.deepStrictEqual(audit.map((r) => r.call_id), [undefined, undefined, "t1", "t1"])
    }).pipe(Effect.provide(host([
      FakeExtension.fromReplies("jail", {
        tool_call: (req) => {
          const path = String(req.args["path"])
          return path.startsWith("/sandbox/") ? {} : { args: { path: `/sandbox/${path}` } }
        }
      }),
      FakeExtension.fromReplies("redactor", {
        tool_result: (req) => ({ content: req.content.replaceAll(/AKIA[A-Z0-9]{16}/g, "[redacted]") })
      })
    ]))))
})
