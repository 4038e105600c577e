import { GuardedToolkit, PromptHooks, ScriptedModel } from "@abhed/ai"
import { Approval, AuditLog, ExtensionHost, FakeExtension } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Ref, Schema, Stream } from "effect"
import { Chat, LanguageModel, Prompt, Tool, Toolkit } from "effect/ai"

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
const Fails = Tool.make("fails", {
  parameters: Schema.Struct({ why: Schema.String }),
  success: Schema.String,
  failure: Schema.Struct({ message: Schema.String }),
  failureMode: "return"
})
const Tools = Toolkit.make(Read, Count, Echo, Fails)

const ran: Array<string> = []
const handlers = Tools.toLayer({
  read: ({ path }) => Effect.sync(() => (ran.push(`read ${path}`), `contents of ${path}: AKIAABCDEFGHIJKLMNOP`)),
  count: ({ text }) => Effect.sync(() => (ran.push(`count ${text}`), { words: text.split(" ").length, sample: text })),
  echo: (text, context) =>
    Effect.gen(function* () {
      ran.push(`echo ${text}`)
      // A preliminary result never went through tool_result: it must not reach anyone.
      yield* context.preliminary(`partial ${text} AKIAABCDEFGHIJKLMNOP`)
      return text
    }),
  fails: ({ why }) => Effect.sync(() => ran.push(`fails ${why}`)).pipe(Effect.andThen(Effect.fail({ message: why })))
})

const host = (fakes: Parameters<typeof ExtensionHost.layerFake>[0]) =>
  ExtensionHost.layerFake(fakes, { sessionId: "s" }).pipe(Layer.provideMerge(AuditLog.layerMemory))

const events = Effect.map(
  AuditLog.use((a) => a.entries),
  (entries) => entries.filter((r) => r.call_id !== undefined).map((r) => `${r.event} ${r.call_id}`)
)

/** One model turn calling `tool` with `params`. Returns the (final) tool result part. */
const callOnce = (tool: string, params: unknown) =>
  Effect.gen(function* () {
    ran.length = 0
    const model = yield* ScriptedModel.make([
      () => [ScriptedModel.toolCall("t1", tool, params), ScriptedModel.finish("tool-calls")]
    ])
    const toolkit = yield* GuardedToolkit.guard(Tools)
    const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
      Effect.provideService(LanguageModel.LanguageModel, model)
    )
    const result = response.toolResults[0]
    assert.isDefined(result)
    return result
  }).pipe(Effect.provide(handlers))

const secretsGuard = FakeExtension.fromReplies("guard", {
  tool_call: (req) => (String(req.args["path"]).includes("secret") ? { block: true, reason: "no secrets" } : {})
})
const redactor = FakeExtension.fromReplies("redactor", {
  tool_result: (req) => ({ content: req.content.replaceAll(/AKIA[A-Z0-9]{16}/g, "[redacted]") })
})
const jail = FakeExtension.fromReplies("jail", {
  tool_call: (req) => {
    const path = req.args["path"]
    return typeof path !== "string" || path.startsWith("/sandbox/") ? {} : { args: { path: `/sandbox/${path}` } }
  }
})

describe("GuardedToolkit: tool_call", () => {
  it.effect("a deny never runs the tool; the model reads the reasons as execution-denied", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("read", { path: "secret.txt" })
      assert.deepStrictEqual(ran, [])
      assert.isTrue(result.isFailure)
      assert.deepStrictEqual(result.encodedResult, { type: "execution-denied", reason: "guard: no secrets" })
      assert.deepStrictEqual(yield* events, ["tool_call t1"])
    }).pipe(Effect.provide(host([secretsGuard])))
  )

  it.effect("an allowed call runs with the settled args; its result is redacted; one tool_call, one tool_result", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("read", { path: "notes.txt" })
      assert.deepStrictEqual(ran, ["read /sandbox/notes.txt"])
      assert.isFalse(result.isFailure)
      assert.strictEqual(result.result, "contents of /sandbox/notes.txt: [redacted]")
      assert.deepStrictEqual(yield* events, ["tool_call t1", "tool_result t1"])
    }).pipe(Effect.provide(host([jail, redactor])))
  )

  it.effect("args rewritten into something the parameter Schema rejects are refused, naming the rewriter", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("read", { path: "notes.txt" })
      assert.deepStrictEqual(ran, [])
      assert.isTrue(result.isFailure)
      const reason = String((result.encodedResult as { reason?: unknown }).reason)
      assert.include(reason, "args rewritten by breaker no longer fit read's parameters")
      assert.include(reason, `["path"]`)
    }).pipe(Effect.provide(host([FakeExtension.fromReplies("breaker", { tool_call: () => ({ args: { path: 7 } }) })])))
  )

  it.effect("with a mock host that does not say who rewrote, the refusal says an extension did", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("read", { path: "notes.txt" })
      assert.deepStrictEqual(ran, [])
      assert.include(JSON.stringify(result.encodedResult), "args rewritten by an extension no longer fit")
    }).pipe(
      Effect.provide(
        ExtensionHost.layerMock({
          toolCall: () => Effect.succeed({ decision: "allow", reasons: [], args: { file: "x" }, rounds: 2 })
        })
      )
    )
  )

  it.effect(
    "args the model got wrong are refused as execution-denied, saying why, and audited; no extension sees them",
    () =>
      Effect.gen(function* () {
        const result = yield* callOnce("read", { path: 1 })
        assert.deepStrictEqual(ran, [])
        assert.isTrue(result.isFailure)
        assert.include(JSON.stringify(result.encodedResult), "args do not fit read's parameters")
        assert.deepStrictEqual(yield* events, ["tool_call t1"])
        const call = (yield* AuditLog.use((a) => a.entries)).find((r) => r.event === "tool_call")
        assert.deepStrictEqual([call?.args, call?.rounds], [{ path: 1 }, []])
      }).pipe(Effect.provide(host([secretsGuard])))
  )
})

describe("GuardedToolkit: parameters the Schema cannot encode back", () => {
  // A decode-only parameter Schema (effect's own, for a token the program must never print): the call decodes, but
  // there are no encoded args to show the extensions. It must be refused, never run unjudged.
  const Deploy = Tool.make("deploy", {
    parameters: Schema.Struct({
      target: Schema.String,
      token: Schema.RedactedFromValue(Schema.String, { disallowEncode: true })
    }),
    success: Schema.String
  })
  const DeployTools = Toolkit.make(Deploy)
  const deployed: Array<string> = []
  const deployHandlers = DeployTools.toLayer({
    deploy: ({ target }) => Effect.sync(() => (deployed.push(target), `deployed ${target}`))
  })
  const blocker = FakeExtension.fromReplies("blocker", { tool_call: () => ({ block: true, reason: "nothing runs" }) })

  it.effect(
    "is refused as execution-denied, saying why, and audited; the handler never runs, no extension sees it",
    () =>
      Effect.gen(function* () {
        const model = yield* ScriptedModel.make([
          () => [
            ScriptedModel.toolCall("t1", "deploy", { target: "production", token: "t0k" }),
            ScriptedModel.finish("tool-calls")
          ]
        ])
        const toolkit = yield* GuardedToolkit.guard(DeployTools)
        const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
          Effect.provideService(LanguageModel.LanguageModel, model)
        )
        const result = response.toolResults[0]
        assert.deepStrictEqual(deployed, [])
        assert.isTrue(result?.isFailure)
        assert.include(JSON.stringify(result?.encodedResult), "deploy's parameter Schema cannot encode the args back")
        assert.deepStrictEqual(yield* events, ["tool_call t1"])
        assert.deepStrictEqual((yield* AuditLog.use((a) => a.entries)).find((r) => r.event === "tool_call")?.rounds, [])
      }).pipe(Effect.provide(deployHandlers), Effect.provide(host([blocker])))
  )
})

describe("GuardedToolkit: non-object params (boxing)", () => {
  const upper = FakeExtension.fromReplies("upper", {
    tool_call: (req) => {
      const value = req.args["value"]
      return typeof value === "string" && value !== value.toUpperCase() ? { args: { value: value.toUpperCase() } } : {}
    }
  })
  it.effect("a string param goes as {value}, and the settled value comes back unboxed", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("echo", "hi")
      assert.deepStrictEqual(ran, ["echo HI"])
      assert.strictEqual(result.result, "HI")
      const audit = yield* AuditLog.use((a) => a.entries)
      const call = audit.find((r) => r.event === "tool_call")
      assert.deepStrictEqual(call?.outcome, {
        decision: "allow",
        reasons: [],
        args: { value: "HI" },
        rounds: 2,
        rewrittenBy: ["upper"]
      })
    }).pipe(Effect.provide(host([upper])))
  )

  it.effect("an extension that drops `value` leaves nothing that decodes: refused, naming it", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("echo", "hi")
      assert.deepStrictEqual(ran, [])
      assert.include(JSON.stringify(result.encodedResult), "args rewritten by dropper no longer fit echo's parameters")
    }).pipe(Effect.provide(host([FakeExtension.fromReplies("dropper", { tool_call: () => ({ args: { other: 1 } }) })])))
  )

  it.effect("preliminary results are dropped: only the final one, after tool_result, is seen", () =>
    Effect.gen(function* () {
      ran.length = 0
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const results = yield* toolkit
        .handle("echo", "hi AKIAABCDEFGHIJKLMNOP", "t9")
        .pipe(Effect.flatMap(Stream.runCollect))
      assert.deepStrictEqual(
        results.map((r) => [r.preliminary, r.result]),
        [[false, "hi [redacted]"]]
      )
    }).pipe(Effect.provide(handlers), Effect.provide(host([redactor])))
  )
})

describe("GuardedToolkit: tool_result", () => {
  const rewrite = (content: (c: string) => string, isError = false) =>
    FakeExtension.fromReplies("rw", {
      tool_result: (req) =>
        content(req.content) === req.content ? {} : { content: content(req.content), is_error: isError }
    })

  it.effect("a structured result is sent as JSON text; a rewrite that fits the success Schema is decoded back", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("count", { text: "my key AKIAABCDEFGHIJKLMNOP" })
      assert.isFalse(result.isFailure)
      assert.deepStrictEqual(result.result, { words: 3, sample: "my key [redacted]" })
      assert.deepStrictEqual(result.encodedResult, { words: 3, sample: "my key [redacted]" })
    }).pipe(Effect.provide(host([redactor])))
  )

  it.effect("a rewrite that no longer fits the success Schema becomes a failure the model reads as text", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("count", { text: "a b" })
      assert.isTrue(result.isFailure)
      assert.deepStrictEqual(result.encodedResult, {
        type: "execution-denied",
        reason: `result rewritten by extensions no longer fits count's result schema: {"words":"many"}`
      })
    }).pipe(Effect.provide(host([rewrite(() => `{"words":"many"}`)])))
  )

  it.effect("a rewrite that is not JSON for a JSON result is a failure too", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("count", { text: "a b" })
      assert.isTrue(result.isFailure)
      assert.include(JSON.stringify(result.encodedResult), "[withheld]")
    }).pipe(Effect.provide(host([rewrite(() => "[withheld]")])))
  )

  it.effect("an is_error an extension raised becomes a failure whose reason is the settled content", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("read", { path: "notes.txt" })
      assert.isTrue(result.isFailure)
      assert.deepStrictEqual(result.encodedResult, { type: "execution-denied", reason: "looks wrong" })
    }).pipe(Effect.provide(host([rewrite(() => "looks wrong", true)])))
  )

  it.effect("a failing on_failure: deny extension withholds the content: the model reads [withheld: …]", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("read", { path: "notes.txt" })
      assert.isTrue(result.isFailure)
      assert.include(JSON.stringify(result.encodedResult), "[withheld: extension crashy unavailable")
      assert.notInclude(JSON.stringify(result.encodedResult), "AKIA")
    }).pipe(
      Effect.provide(
        host([
          FakeExtension.make(
            "crashy",
            (req) => (req.event === "tool_result" ? Effect.fail(FakeExtension.FakeExit.code(1)) : Effect.succeed({})),
            {
              on_failure: "deny"
            }
          )
        ])
      )
    )
  )

  it.effect("a tool's own failure (failureMode return) goes as is_error, and a redaction of it is decoded back", () =>
    Effect.gen(function* () {
      const result = yield* callOnce("fails", { why: "token AKIAABCDEFGHIJKLMNOP expired" })
      assert.isTrue(result.isFailure)
      assert.deepStrictEqual(result.encodedResult, { message: "token [redacted] expired" })
      const audit = yield* AuditLog.use((a) => a.entries)
      assert.deepStrictEqual(audit.find((r) => r.event === "tool_result")?.outcome, {
        content: `{"message":"token [redacted] expired"}`,
        is_error: true,
        rounds: 2
      })
    }).pipe(Effect.provide(host([redactor])))
  )
})

describe("GuardedToolkit: approvals through effect/ai's flow", () => {
  // Asks about the first read call it is shown (every settling round of it); denies any later dispatch: a second
  // tool_call for the approved call would be refused.
  const makeAsker = () => {
    let first: string | undefined
    const rounds = new Set<number>()
    return FakeExtension.fromReplies("asker", {
      tool_call: (req) => {
        if (req.tool !== "read") return {}
        first ??= req.call_id
        const round = req.round ?? 1
        if (req.call_id !== first || rounds.has(round)) return { block: true, reason: "asked twice" }
        rounds.add(round)
        return { ask: true, reason: "sure?" }
      }
    })
  }

  const toolResultsOf = (prompt: Prompt.Prompt): Array<Prompt.ToolResultPart> =>
    prompt.content
      .flatMap((m) => (m.role === "tool" ? m.content : []))
      .filter((p): p is Prompt.ToolResultPart => p.type === "tool-result")

  /** Turn 1 calls read; the Approver answers; turn 2 (the approved turn) runs it. */
  const conversation = (approve: boolean, params: unknown = { path: "notes.txt" }) =>
    Effect.gen(function* () {
      ran.length = 0
      const asked: Array<Approval.ApprovalRequest> = []
      const model = yield* ScriptedModel.make([
        () => [ScriptedModel.toolCall("t1", "read", params), ScriptedModel.finish("tool-calls")],
        () => [ScriptedModel.text("ok"), ScriptedModel.finish("stop")]
      ])
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const generate = (prompt: Prompt.Prompt) =>
        LanguageModel.generateText({ prompt, toolkit }).pipe(Effect.provideService(LanguageModel.LanguageModel, model))
      const first = yield* generate(Prompt.make("go"))
      assert.deepStrictEqual(
        first.content.filter((p) => p.type === "tool-approval-request").map((p) => p.toolCallId),
        ["t1"]
      )
      assert.deepStrictEqual(ran, [])
      const answers = yield* GuardedToolkit.resolveApprovals(toolkit, first.content).pipe(
        Effect.provide(Approval.Approver.layer((request) => Effect.sync(() => (asked.push(request), approve))))
      )
      const second = yield* generate(
        Prompt.concat(Prompt.concat(Prompt.make("go"), Prompt.fromResponseParts(first.content)), answers)
      )
      // resolveApprovals ran the approved call: its result is in the answers, and the next turn runs nothing again.
      if (approve) assert.deepStrictEqual(second.toolResults, [])
      return { asked, second, results: toolResultsOf(answers) }
    }).pipe(Effect.provide(handlers))

  it.effect("an ask is a tool-approval-request; approved, the settled args run, without a second tool_call", () =>
    Effect.gen(function* () {
      const { asked, results } = yield* conversation(true)
      assert.deepStrictEqual(asked, [
        { tool: "read", args: { path: "/sandbox/notes.txt" }, reasons: [{ extension: "asker", reason: "sure?" }] }
      ])
      assert.deepStrictEqual(ran, ["read /sandbox/notes.txt"])
      const result = results[0]
      assert.strictEqual(result?.result, "contents of /sandbox/notes.txt: AKIAABCDEFGHIJKLMNOP")
      assert.deepStrictEqual(yield* events, ["tool_call t1", "tool_result t1"])
    }).pipe(Effect.provide(host([makeAsker(), jail])))
  )

  it.effect(
    "params with keys the Schema drops: the extensions see the args the tool takes, and the ask still holds",
    () =>
      Effect.gen(function* () {
        const { results } = yield* conversation(true, { path: "notes.txt", stray: 1 })
        assert.deepStrictEqual(ran, ["read /sandbox/notes.txt"])
        assert.isFalse(results[0]?.isFailure)
        assert.deepStrictEqual(yield* events, ["tool_call t1", "tool_result t1"])
        const call = (yield* AuditLog.use((a) => a.entries)).find((r) => r.event === "tool_call")
        assert.deepStrictEqual(call?.rounds[0]?.exchanges.find((x) => x.extension === "asker")?.reply, {
          ask: true,
          reason: "sure?"
        })
        assert.deepStrictEqual((call?.outcome as { args?: unknown } | undefined)?.args, { path: "/sandbox/notes.txt" })
      }).pipe(Effect.provide(host([makeAsker(), jail])))
  )

  it.effect("an approved call's result goes through context like every message: a filter that drops it, drops it", () =>
    Effect.gen(function* () {
      ran.length = 0
      const model = yield* ScriptedModel.make([
        () => [ScriptedModel.toolCall("t1", "read", { path: "notes.txt" }), ScriptedModel.finish("tool-calls")],
        () => [ScriptedModel.text("ok"), ScriptedModel.finish("stop")]
      ])
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const generate = (prompt: Prompt.Prompt) =>
        LanguageModel.generateText({ prompt, toolkit }).pipe(Effect.provideService(LanguageModel.LanguageModel, model))
      // The loop Agent.run runs: filter the history, generate, resolve the approvals.
      let history = Prompt.make("go")
      for (let turn = 0; turn < 2; turn++) {
        const response = yield* generate(yield* PromptHooks.applyContext(history))
        const approvals = yield* GuardedToolkit.resolveApprovals(toolkit, response.content).pipe(
          Effect.provide(Approval.Approver.layer(() => Effect.succeed(true)))
        )
        history = Prompt.concat(Prompt.concat(history, Prompt.fromResponseParts(response.content)), approvals)
      }
      assert.deepStrictEqual(ran, ["read /sandbox/notes.txt"])
      assert.strictEqual(model.prompts.length, 2)
      assert.notInclude(JSON.stringify(model.prompts[1]), "AKIA")
      assert.include(JSON.stringify(history), "AKIA") // it ran, and the agent's own history has it
    }).pipe(
      Effect.provide(handlers),
      Effect.provide(
        host([
          makeAsker(),
          jail,
          FakeExtension.fromReplies("secrets", {
            context: (req) => ({
              keep: req.messages.flatMap((m, i) => (JSON.stringify(m).includes("AKIA") ? [] : [i]))
            })
          })
        ])
      )
    )
  )

  it.effect(
    "a tool's own approval, its result dropped by a context filter: the call still runs once, never again unasked",
    () =>
      Effect.gen(function* () {
        // Allowed by the extensions, asked by the tool itself; the filter drops whatever holds the secret. Were the
        // approval answer kept without its result, effect/ai would take it as pending and run the call again.
        const peeked: Array<string> = []
        const Peek = Tool.make("peek", {
          parameters: Schema.Struct({ path: Schema.String }),
          success: Schema.String,
          needsApproval: true
        })
        const PeekTools = Toolkit.make(Peek)
        const peekHandlers = PeekTools.toLayer({
          peek: ({ path }) => Effect.sync(() => (peeked.push(path), `${path}: AKIAABCDEFGHIJKLMNOP`))
        })
        const model = yield* ScriptedModel.make([
          () => [ScriptedModel.toolCall("p1", "peek", { path: ".env" }), ScriptedModel.finish("tool-calls")],
          () => [ScriptedModel.text("ok"), ScriptedModel.finish("stop")]
        ])
        const toolkit = yield* GuardedToolkit.guard(PeekTools).pipe(Effect.provide(peekHandlers))
        let history = Prompt.make("go")
        for (let turn = 0; turn < 2; turn++) {
          const response = yield* LanguageModel.generateText({
            prompt: yield* PromptHooks.applyContext(history),
            toolkit
          }).pipe(Effect.provideService(LanguageModel.LanguageModel, model), Effect.provide(peekHandlers))
          const approvals = yield* GuardedToolkit.resolveApprovals(toolkit, response.content).pipe(
            Effect.provide(Approval.Approver.layer(() => Effect.succeed(true))),
            Effect.provide(peekHandlers)
          )
          history = Prompt.concat(Prompt.concat(history, Prompt.fromResponseParts(response.content)), approvals)
        }
        assert.deepStrictEqual(peeked, [".env"])
        assert.notInclude(JSON.stringify(model.prompts[1]), "AKIA")
      }).pipe(
        Effect.provide(
          host([
            FakeExtension.fromReplies("secrets", {
              context: (req) => ({
                keep: req.messages.flatMap((m, i) => (JSON.stringify(m).includes("AKIA") ? [] : [i]))
              })
            })
          ])
        )
      )
  )

  it.effect(
    "a tool's own approval after an extension rewrote the args: the Approver is shown the args that will run",
    () =>
      Effect.gen(function* () {
        const asked: Array<Approval.ApprovalRequest> = []
        const Peek = Tool.make("peek", {
          parameters: Schema.Struct({ path: Schema.String }),
          success: Schema.String,
          needsApproval: true
        })
        const PeekTools = Toolkit.make(Peek)
        const peekHandlers = PeekTools.toLayer({ peek: ({ path }) => Effect.succeed(path) })
        const model = yield* ScriptedModel.make([
          () => [ScriptedModel.toolCall("p1", "peek", { path: "notes.txt" }), ScriptedModel.finish("tool-calls")]
        ])
        const toolkit = yield* GuardedToolkit.guard(PeekTools).pipe(Effect.provide(peekHandlers))
        const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
          Effect.provideService(LanguageModel.LanguageModel, model),
          Effect.provide(peekHandlers)
        )
        yield* GuardedToolkit.resolveApprovals(toolkit, response.content).pipe(
          Effect.provide(Approval.Approver.layer((request) => Effect.sync(() => (asked.push(request), false)))),
          Effect.provide(peekHandlers)
        )
        assert.deepStrictEqual(asked, [{ tool: "peek", args: { path: "/sandbox/notes.txt" }, reasons: [] }])
      }).pipe(Effect.provide(host([jail])))
  )

  it.effect("a call id handled twice runs once: the second is refused", () =>
    Effect.gen(function* () {
      ran.length = 0
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const first = yield* toolkit.handle("read", { path: "a" }, "twice").pipe(Effect.flatMap(Stream.runCollect))
      const second = yield* toolkit.handle("read", { path: "a" }, "twice").pipe(Effect.flatMap(Stream.runCollect))
      assert.deepStrictEqual(ran, ["read a"])
      assert.isFalse(first[0]?.isFailure)
      assert.include(JSON.stringify(second[0]?.encodedResult), "call twice was handled already")
    }).pipe(Effect.provide(handlers), Effect.provide(host([])))
  )

  it.effect("refused by the Approver, the model reads execution-denied with the reasons; nothing ran", () =>
    Effect.gen(function* () {
      const { second } = yield* conversation(false)
      assert.deepStrictEqual(ran, [])
      const result = second.toolResults[0]
      assert.isTrue(result?.isFailure)
      assert.deepStrictEqual(result?.encodedResult, { type: "execution-denied", reason: "not approved: asker: sure?" })
      assert.deepStrictEqual(yield* events, ["tool_call t1"])
    }).pipe(Effect.provide(host([makeAsker(), jail])))
  )

  it.effect("an ask outside the approval flow (handle called directly) is refused, never run", () =>
    Effect.gen(function* () {
      ran.length = 0
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const results = yield* toolkit.handle("read", { path: "a" }, "t5").pipe(Effect.flatMap(Stream.runCollect))
      assert.deepStrictEqual(ran, [])
      assert.deepStrictEqual(
        results.map((r) => r.encodedResult),
        [{ type: "execution-denied", reason: "needs approval, which was not requested: asker: sure?" }]
      )
    }).pipe(Effect.provide(handlers), Effect.provide(host([makeAsker()])))
  )

  it.effect("an ask whose settled args cannot run asks nobody: refused at once, naming the rewriter", () =>
    Effect.gen(function* () {
      const asked: Array<Approval.ApprovalRequest> = []
      const model = yield* ScriptedModel.make([
        () => [ScriptedModel.toolCall("t1", "read", { path: "notes.txt" }), ScriptedModel.finish("tool-calls")]
      ])
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const first = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      const answers = yield* GuardedToolkit.resolveApprovals(toolkit, first.content).pipe(
        Effect.provide(Approval.Approver.layer((request) => Effect.sync(() => (asked.push(request), true))))
      )
      assert.deepStrictEqual(asked, [])
      assert.strictEqual(answers.content.length, 0)
      assert.include(JSON.stringify(first.toolResults[0]?.encodedResult), "args rewritten by breaker no longer fit")
    }).pipe(
      Effect.provide(handlers),
      Effect.provide(
        host([makeAsker(), FakeExtension.fromReplies("breaker", { tool_call: () => ({ args: { path: 7 } }) })])
      )
    )
  )
})

describe("GuardedToolkit: bounds and model output", () => {
  it.effect("outcomes kept for approval are bounded: the oldest goes, and is then refused rather than run", () =>
    Effect.gen(function* () {
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const needsApproval = toolkit.tools.read.needsApproval
      assert.isFunction(needsApproval)
      if (typeof needsApproval !== "function") return
      for (let i = 0; i <= GuardedToolkit.MaxPending; i++) {
        const answer = needsApproval({ path: `f${i}` }, { toolCallId: `id${i}`, messages: [] })
        assert.isTrue(typeof answer === "boolean" ? answer : yield* answer)
      }
      assert.isUndefined(toolkit.awaiting("id0"))
      assert.deepStrictEqual(toolkit.awaiting(`id${GuardedToolkit.MaxPending}`)?.args, {
        path: `f${GuardedToolkit.MaxPending}`
      })
      ran.length = 0
      const results = yield* toolkit.handle("read", { path: "f0" }, "id0").pipe(Effect.flatMap(Stream.runCollect))
      assert.deepStrictEqual(ran, [])
      assert.include(JSON.stringify(results[0]?.encodedResult), "needs approval, which was not requested")
    }).pipe(
      Effect.provide(handlers),
      Effect.provide(host([FakeExtension.fromReplies("asker", { tool_call: () => ({ ask: true, reason: "sure?" }) })]))
    )
  )

  it.effect("a tool's toModelOutput is applied to the rewritten result, never the original", () =>
    Effect.gen(function* () {
      const Shout = Tool.make("shout", {
        parameters: Schema.Struct({ text: Schema.String }),
        success: Schema.String,
        toModelOutput: (result) => [Prompt.makePart("text", { text: `model sees: ${result}` })]
      })
      const kit = Toolkit.make(Shout)
      const toolkit = yield* GuardedToolkit.guard(kit).pipe(
        Effect.provide(kit.toLayer({ shout: ({ text }) => Effect.succeed(text) }))
      )
      const results = yield* toolkit
        .handle("shout", { text: "key AKIAABCDEFGHIJKLMNOP" }, "m1")
        .pipe(Effect.flatMap(Stream.runCollect))
      assert.deepStrictEqual(
        results[0]?.modelOutput?.map((p) => (p.type === "text" ? p.text : p.type)),
        ["model sees: key [redacted]"]
      )
    }).pipe(Effect.provide(host([redactor])))
  )

  it.effect("an unchanged result's toModelOutput sees what tool_result judged, not the handler's extra fields", () =>
    Effect.gen(function* () {
      // The handler returns more than its success Schema holds (TypeScript allows the extra field); the filters judge
      // the encoded result, so the model must read nothing beyond it.
      const Who = Tool.make("who", {
        parameters: Schema.Struct({ id: Schema.String }),
        success: Schema.Struct({ name: Schema.String }),
        toModelOutput: (result) => [Prompt.makePart("text", { text: JSON.stringify(result) })]
      })
      const kit = Toolkit.make(Who)
      const raw = { name: "ann", apiKey: "AKIAABCDEFGHIJKLMNOP" }
      const toolkit = yield* GuardedToolkit.guard(kit).pipe(
        Effect.provide(kit.toLayer({ who: () => Effect.succeed(raw) }))
      )
      const results = yield* toolkit.handle("who", { id: "1" }, "m2").pipe(Effect.flatMap(Stream.runCollect))
      assert.deepStrictEqual(
        results[0]?.modelOutput?.map((p) => (p.type === "text" ? p.text : p.type)),
        [`{"name":"ann"}`]
      )
      assert.deepStrictEqual(results[0]?.result, { name: "ann" })
    }).pipe(Effect.provide(host([redactor])))
  )
})

describe("GuardedToolkit: streamText", () => {
  it.effect("the same rules when streaming: a deny, a redacted result, an ask as a tool-approval-request", () =>
    Effect.gen(function* () {
      ran.length = 0
      const model = yield* ScriptedModel.make([
        () => [
          ScriptedModel.toolCall("s1", "read", { path: "secret.txt" }),
          ScriptedModel.toolCall("s2", "read", { path: "notes.txt" }),
          ScriptedModel.toolCall("s3", "echo", "push"),
          ScriptedModel.finish("tool-calls")
        ]
      ])
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const parts = yield* LanguageModel.streamText({ prompt: "go", toolkit }).pipe(
        Stream.runCollect,
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      const results = new Map(
        parts.flatMap((p) => (p.type === "tool-result" && !p.preliminary ? [[p.id, p.encodedResult] as const] : []))
      )
      assert.deepStrictEqual(results.get("s1"), { type: "execution-denied", reason: "guard: no secrets" })
      assert.strictEqual(results.get("s2"), "contents of notes.txt: [redacted]")
      assert.isFalse(results.has("s3"))
      assert.deepStrictEqual(
        parts.flatMap((p) => (p.type === "tool-approval-request" ? [p.toolCallId] : [])),
        ["s3"]
      )
      assert.deepStrictEqual(ran, ["read notes.txt"])
      // No preliminary result of any call reached the stream unredacted.
      assert.notInclude(JSON.stringify(parts), "AKIA")
    }).pipe(
      Effect.provide(handlers),
      Effect.provide(
        host([
          secretsGuard,
          redactor,
          FakeExtension.fromReplies("asker", {
            tool_call: (req) => (req.tool === "echo" ? { ask: true, reason: "sure?" } : {})
          })
        ])
      )
    )
  )
})

describe("GuardedToolkit: call ids", () => {
  it.effect("a call handled without a tool call id still ties its tool_call to its tool_result", () =>
    Effect.gen(function* () {
      const toolkit = yield* GuardedToolkit.guard(Tools)
      yield* toolkit.handle("read", { path: "a" }).pipe(Effect.flatMap(Stream.runCollect))
      yield* toolkit.handle("read", { path: "b" }).pipe(Effect.flatMap(Stream.runCollect))
      assert.deepStrictEqual(yield* events, [
        "tool_call ai-1",
        "tool_result ai-1",
        "tool_call ai-2",
        "tool_result ai-2"
      ])
    }).pipe(Effect.provide(handlers), Effect.provide(host([redactor])))
  )

  it.live(
    "two calls alike sharing an id, handled at once (an embedder's own loop), run once: the other is refused",
    () =>
      Effect.gen(function* () {
        ran.length = 0
        const toolkit = yield* GuardedToolkit.guard(Tools)
        // Handled directly, as an embedder does that resolves the calls itself (`disableToolCallResolution`): no
        // outcome was kept for them, so each is judged by a tool_call, and both were being judged at once.
        const results = yield* Effect.all(
          [1, 2, 3].map(() => toolkit.handle("read", { path: "a" }, "dup").pipe(Effect.flatMap(Stream.runCollect))),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(ran, ["read a"])
        const refused = results.filter((r) => JSON.stringify(r).includes("call dup was handled already"))
        assert.strictEqual(refused.length, 2)
      }).pipe(
        Effect.provide(handlers),
        // An extension that answers later, as a process does.
        Effect.provide(host([FakeExtension.make("slow", () => Effect.as(Effect.sleep("10 millis"), {}))]))
      )
  )
})

describe("GuardedToolkit: Chat", () => {
  it.effect(
    "a Chat over a guarded toolkit: the approved turn runs once, and the history holds what the model read",
    () =>
      Effect.gen(function* () {
        ran.length = 0
        const model = yield* ScriptedModel.make([
          () => [
            ScriptedModel.toolCall("k1", "read", { path: "secret.txt" }),
            ScriptedModel.toolCall("k2", "echo", "push"),
            ScriptedModel.finish("tool-calls")
          ],
          () => [ScriptedModel.text("done"), ScriptedModel.finish("stop")]
        ])
        const toolkit = yield* GuardedToolkit.guard(Tools)
        const chat = yield* Chat.empty
        const first = yield* chat
          .generateText({ prompt: "go", toolkit })
          .pipe(Effect.provideService(LanguageModel.LanguageModel, model))
        const answers = yield* GuardedToolkit.resolveApprovals(toolkit, first.content).pipe(
          Effect.provide(Approval.Approver.layer(() => Effect.succeed(true)))
        )
        yield* chat
          .generateText({ prompt: answers, toolkit })
          .pipe(Effect.provideService(LanguageModel.LanguageModel, model))
        assert.deepStrictEqual(ran, ["echo push"])
        const history = yield* Ref.get(chat.history)
        const results = history.content.flatMap((m) =>
          m.role === "tool" ? m.content.flatMap((p) => (p.type === "tool-result" ? [[p.id, p.result]] : [])) : []
        )
        assert.deepStrictEqual(results, [
          ["k1", { type: "execution-denied", reason: "guard: no secrets" }],
          ["k2", "push"]
        ])
        assert.deepStrictEqual(yield* events, ["tool_call k1", "tool_call k2", "tool_result k2"])
      }).pipe(
        Effect.provide(handlers),
        Effect.provide(
          host([
            secretsGuard,
            FakeExtension.fromReplies("asker", {
              tool_call: (req) => (req.tool === "echo" ? { ask: true, reason: "sure?" } : {})
            })
          ])
        )
      )
  )
})
