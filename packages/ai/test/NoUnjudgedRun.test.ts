import { ArgsSchema, ExtensionToolkit, GuardedToolkit, ScriptedModel } from "@abhed/ai"
import { Approval, AuditLog, ExtensionHost, FakeExtension } from "@abhed/host"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { Effect, Layer, Schema, Stream } from "effect"
import type * as SchemaAST from "effect/SchemaAST"
import { LanguageModel, Prompt, Tool, Toolkit } from "effect/ai"

/**
 * A handler runs only with args that went through `tool_call` and settled: every path into a handler, with a guard
 * that denies everything installed, runs nothing (and each refused call is in the audit).
 */

const ran: Array<unknown> = []

// The pattern ExtensionToolkit uses for an agent's own tool: a JSON-Schema dynamic tool (its handler decodes
// anything) with the Schema the args are checked against as its ArgsSchema.
const Shell = Tool.dynamic("shell", {
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  success: Schema.String
}).annotate(ArgsSchema, Schema.Struct({ command: Schema.String }))
const Bash = Tool.make("bash", {
  parameters: Schema.Struct({ command: Schema.String.check(Schema.isMaxLength(8)) }),
  success: Schema.String
})
const Tools = Toolkit.make(Shell, Bash)
const handlers = Tools.toLayer({
  shell: (params) => Effect.sync(() => (ran.push(params), "ran")),
  bash: (params) => Effect.sync(() => (ran.push(params), "ran"))
})

const denyAll = FakeExtension.fromReplies("guard", { tool_call: () => ({ block: true, reason: "nothing runs" }) })
const host = (fakes: Parameters<typeof ExtensionHost.layerFake>[0]) =>
  ExtensionHost.layerFake(fakes, { sessionId: "s" }).pipe(Layer.provideMerge(AuditLog.layerMemory))

const toolCalls = Effect.map(
  AuditLog.use((a) => a.entries),
  (entries) => entries.filter((r) => r.event === "tool_call")
)

describe("no tool runs unjudged", () => {
  it.effect("a loose dynamic tool's handler never runs with args that fail its ArgsSchema: refused and audited", () =>
    Effect.gen(function* () {
      ran.length = 0
      const model = yield* ScriptedModel.make([
        () => [
          ScriptedModel.toolCall("a", "shell", { command: ["rm", "-rf", "/"] }),
          ScriptedModel.toolCall("b", "shell", { cmd: "rm -rf /" }),
          ScriptedModel.finish("tool-calls")
        ]
      ])
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      assert.deepStrictEqual(ran, [])
      const byId = new Map(response.toolResults.map((r) => [r.id, r]))
      for (const id of ["a", "b"]) {
        assert.isTrue(byId.get(id)?.isFailure)
        const result = byId.get(id)?.encodedResult as { type?: unknown; reason?: unknown } | undefined
        assert.strictEqual(result?.type, "execution-denied")
        assert.include(String(result?.reason), "args do not fit shell's parameters")
      }
      const calls = yield* toolCalls
      assert.deepStrictEqual(
        calls.map((r) => [r.call_id, r.tool, r.args]),
        [
          ["a", "shell", { command: ["rm", "-rf", "/"] }],
          ["b", "shell", { cmd: "rm -rf /" }]
        ]
      )
      // Sent to no extension: the guard never saw args the tool does not take. Denied by the host, saying why.
      assert.deepStrictEqual(
        calls.map((r) => r.rounds),
        [[], []]
      )
      for (const record of calls) {
        assert.include(record.notes[0], "not sent to any extension: args do not fit shell's parameters")
        const outcome = record.outcome as { decision?: unknown; reasons?: ReadonlyArray<{ extension: string }> }
        assert.deepStrictEqual([outcome.decision, outcome.reasons?.map((r) => r.extension)], ["deny", ["host"]])
      }
    }).pipe(Effect.provide(handlers), Effect.provide(host([denyAll])))
  )

  it.effect("parse options that loosen the decode (disableChecks) do not let args the tool's check rejects run", () =>
    Effect.gen(function* () {
      ran.length = 0
      const toolkit = yield* GuardedToolkit.guard(Tools)
      const results = yield* toolkit
        .handle("bash", { command: "rm -rf / --no-preserve-root" }, "d1", { disableChecks: true })
        .pipe(Effect.flatMap(Stream.runCollect))
      assert.deepStrictEqual(ran, [])
      assert.include(JSON.stringify(results[0]?.encodedResult), "args do not fit bash's parameters")
      assert.deepStrictEqual(
        (yield* toolCalls).map((r) => r.call_id),
        ["d1"]
      )
    }).pipe(
      Effect.provide(handlers),
      Effect.provide(ExtensionHost.layerFake([], { sessionId: "s" }).pipe(Layer.provideMerge(AuditLog.layerMemory)))
    )
  )
})

describe("no tool runs unjudged: the other paths into a handler", () => {
  const invoked: Array<unknown> = []
  const provider = FakeExtension.fromReplies("provider", {
    list_tools: () => ({
      tools: [
        { name: "wipe", description: "", input_schema: { type: "object", properties: { path: { type: "string" } } } }
      ]
    }),
    invoke_tool: (req) => (invoked.push(req.args), { result: "wiped" })
  })

  it.effect("an extension tool's handler given to the model without the guard invokes nobody", () =>
    Effect.gen(function* () {
      invoked.length = 0
      const toolkit = yield* ExtensionToolkit.make
      const model = yield* ScriptedModel.make([
        () => [ScriptedModel.toolCall("w", "wipe", { path: "/" }), ScriptedModel.finish("tool-calls")]
      ])
      const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      assert.deepStrictEqual(invoked, [])
      assert.isTrue(response.toolResults[0]?.isFailure)
      assert.include(String(response.toolResults[0]?.result), "wipe was not called through GuardedToolkit")
      assert.deepStrictEqual(
        (yield* AuditLog.use((a) => a.entries)).filter((r) => r.event === "invoke_tool"),
        []
      )
    }).pipe(Effect.provide(host([provider])))
  )

  it.effect("an unknown tool is refused without asking the inner toolkit, whatever its handle knows", () =>
    Effect.gen(function* () {
      ran.length = 0
      const handled = yield* Tools
      // An inner toolkit whose handle answers names its tools do not offer.
      const sneaky: Toolkit.WithHandler<typeof Tools.tools> = {
        tools: handled.tools,
        handle: (name, params, toolCallId, options) =>
          Effect.suspend(() => (ran.push(name), handled.handle(name, params, toolCallId, options)))
      }
      const toolkit = yield* GuardedToolkit.guard(sneaky)
      const exit = yield* Effect.exit(toolkit.handle("hidden" as "bash", { command: "ls" }, "h1"))
      assert.isTrue(exit._tag === "Failure")
      assert.deepStrictEqual(ran, [])
    }).pipe(Effect.provide(handlers), Effect.provide(host([])))
  )

  it.effect("an approval request this toolkit did not make: nobody is asked about the model's args, nothing runs", () =>
    Effect.gen(function* () {
      ran.length = 0
      const asked: Array<Approval.ApprovalRequest> = []
      const model = yield* ScriptedModel.make([
        () => [ScriptedModel.toolCall("q", "bash", { command: "ls" }), ScriptedModel.finish("tool-calls")]
      ])
      const first = yield* GuardedToolkit.guard(Tools)
      const response = yield* LanguageModel.generateText({ prompt: "go", toolkit: first }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      const other = yield* GuardedToolkit.guard(Tools)
      const answers = yield* GuardedToolkit.resolveApprovals(other, response.content).pipe(
        Effect.provide(Approval.Approver.layer((request) => Effect.sync(() => (asked.push(request), true))))
      )
      assert.deepStrictEqual(asked, [])
      assert.deepStrictEqual(ran, [])
      assert.include(JSON.stringify(answers), "no approval was requested for this call by this toolkit")
    }).pipe(
      Effect.provide(handlers),
      Effect.provide(host([FakeExtension.fromReplies("asker", { tool_call: () => ({ ask: true, reason: "sure?" }) })]))
    )
  )
})

describe("no tool runs unjudged: an asked call runs only once the Approver said yes", () => {
  const asker = FakeExtension.fromReplies("asker", { tool_call: () => ({ ask: true, reason: "sure?" }) })
  const askOwn = Tool.make("peek", {
    parameters: Schema.Struct({ path: Schema.String }),
    success: Schema.String,
    needsApproval: true
  })
  const PeekTools = Toolkit.make(askOwn)
  const peekHandlers = PeekTools.toLayer({ peek: (p) => Effect.sync(() => (ran.push(p), "peeked")) })

  const requested = <T extends Record<string, Tool.Any>>(toolkit: GuardedToolkit.Guarded<T>, name: string) =>
    Effect.gen(function* () {
      const model = yield* ScriptedModel.make([
        () => [ScriptedModel.toolCall("r1", name, { command: "ls", path: "a" }), ScriptedModel.finish("tool-calls")]
      ])
      const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      assert.deepStrictEqual(
        response.content.filter((p) => p.type === "tool-approval-request").map((p) => p.toolCallId),
        ["r1"]
      )
      return response
    })

  it.effect(
    "an extension's ask, then handle called directly with the same call: refused, the Approver never answered",
    () =>
      Effect.gen(function* () {
        ran.length = 0
        const toolkit = yield* GuardedToolkit.guard(Tools)
        yield* requested(toolkit, "shell")
        const results = yield* toolkit
          .handle("shell", { command: "ls", path: "a" }, "r1")
          .pipe(Effect.flatMap(Stream.runCollect))
        assert.deepStrictEqual(ran, [])
        assert.include(JSON.stringify(results[0]?.encodedResult), "needs approval, which the Approver did not give")
      }).pipe(Effect.provide(handlers), Effect.provide(host([asker])))
  )

  it.effect("a tool's own needsApproval, then effect/ai told it was approved without the Approver: refused", () =>
    Effect.gen(function* () {
      ran.length = 0
      const toolkit = yield* GuardedToolkit.guard(PeekTools)
      const response = yield* requested(toolkit, "peek")
      const approval = response.content.find((p) => p.type === "tool-approval-request")
      assert.isDefined(approval)
      if (approval?.type !== "tool-approval-request") return
      // The agent answers the request itself, in effect/ai's own words, instead of through resolveApprovals.
      const answer = Prompt.fromMessages([
        Prompt.makeMessage("tool", {
          content: [Prompt.toolApprovalResponsePart({ approvalId: approval.approvalId, approved: true })]
        })
      ])
      const model = yield* ScriptedModel.make([() => [ScriptedModel.finish("stop")]])
      const second = yield* LanguageModel.generateText({
        prompt: Prompt.concat(Prompt.concat(Prompt.make("go"), Prompt.fromResponseParts(response.content)), answer),
        toolkit
      }).pipe(Effect.provideService(LanguageModel.LanguageModel, model))
      assert.deepStrictEqual(ran, [])
      assert.include(
        JSON.stringify(second.toolResults[0]?.encodedResult),
        "needs approval, which the Approver did not give"
      )
    }).pipe(Effect.provide(peekHandlers), Effect.provide(host([])))
  )
})

describe("no tool runs unjudged: two calls sharing an id", () => {
  const Peek = Tool.make("peek", {
    parameters: Schema.Struct({ path: Schema.String }),
    success: Schema.String,
    needsApproval: true
  })
  const PeekTools = Toolkit.make(Peek)
  const peekHandlers = PeekTools.toLayer({ peek: (p) => Effect.sync(() => (ran.push(p), "peeked")) })

  it.effect("the Approver says yes to one call's args: the other call of the same id does not run", () =>
    Effect.gen(function* () {
      ran.length = 0
      const asked: Array<unknown> = []
      const toolkit = yield* GuardedToolkit.guard(PeekTools)
      // A provider that lets the model name its calls: two calls, one id.
      const model = yield* ScriptedModel.make([
        () => [
          ScriptedModel.toolCall("x", "peek", { path: "/etc/shadow" }),
          ScriptedModel.toolCall("x", "peek", { path: "notes.txt" }),
          ScriptedModel.finish("tool-calls")
        ]
      ])
      const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      const answers = yield* GuardedToolkit.resolveApprovals(toolkit, response.content).pipe(
        Effect.provide(
          Approval.Approver.layer((request) =>
            Effect.sync(() => (asked.push(request.args), JSON.stringify(request.args) === `{"path":"notes.txt"}`))
          )
        )
      )
      assert.deepStrictEqual(asked, [{ path: "notes.txt" }])
      assert.deepStrictEqual(ran, [])
      assert.include(JSON.stringify(answers), "call x was judged with other args")
    }).pipe(Effect.provide(peekHandlers), Effect.provide(host([])))
  )
})

describe("no tool runs unjudged: property", () => {
  const invoked: Array<unknown> = []
  const provider = FakeExtension.fromReplies("provider", {
    list_tools: () => ({
      tools: [
        {
          name: "ext_strict",
          description: "",
          input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] }
        },
        { name: "ext_loose", description: "", input_schema: {} }
      ]
    }),
    invoke_tool: (req) => (invoked.push(req.args), { result: "ran" })
  })
  // Schema and dynamic tools, strict and loose.
  const Loose = Tool.make("loose", { parameters: Schema.Record(Schema.String, Schema.Unknown), success: Schema.String })
  const Anything = Tool.make("anything", { parameters: Schema.Unknown, success: Schema.String })
  const Text = Tool.make("text", { parameters: Schema.String, success: Schema.String })
  const Free = Tool.dynamic("free", { parameters: { type: "object" }, success: Schema.String })
  const Calc = Tool.dynamic("calc", {
    parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
    success: Schema.Number
  })
  const Own = Toolkit.make(Shell, Bash, Loose, Anything, Text, Free, Calc)
  const ownHandlers = Own.toLayer({
    shell: (p) => Effect.sync(() => (ran.push(p), "ran")),
    bash: (p) => Effect.sync(() => (ran.push(p), "ran")),
    loose: (p) => Effect.sync(() => (ran.push(p), "ran")),
    anything: (p) => Effect.sync(() => (ran.push(p), "ran")),
    text: (p) => Effect.sync(() => (ran.push(p), "ran")),
    free: (p) => Effect.sync(() => (ran.push(p), "ran")),
    calc: (p) => Effect.sync(() => (ran.push(p), 0))
  })
  const names = [...Object.keys(Own.tools), "ext_strict", "ext_loose"]

  const args = fc.oneof(
    fc.record({ command: fc.string({ maxLength: 12 }) }),
    fc.record({ command: fc.jsonValue() }),
    fc.record({ cmd: fc.string() }),
    fc.record({ a: fc.double(), b: fc.integer() }),
    fc.record({ a: fc.jsonValue() }, { requiredKeys: [] }),
    fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })),
    fc.record({ command: fc.string({ maxLength: 4 }), extra: fc.jsonValue({ maxDepth: 1 }) }),
    fc.jsonValue({ maxDepth: 3 })
  )
  const options = fc.constantFrom<SchemaAST.ParseOptions | undefined>(
    undefined,
    { disableChecks: true },
    { onExcessProperty: "error" },
    { errors: "all" }
  )
  const call = fc.record({ name: fc.constantFrom(...names), params: args, options })
  const denyAll = FakeExtension.fromReplies("guard", { tool_call: () => ({ block: true, reason: "nothing runs" }) })
  const askAll = FakeExtension.fromReplies("guard", { tool_call: () => ({ ask: true, reason: "sure?" }) })

  /** Every path: the model's turn (generateText, streamText), the approvals (answered no), and handle directly. */
  const session = (
    calls: ReadonlyArray<{
      readonly name: string
      readonly params: unknown
      readonly options: SchemaAST.ParseOptions | undefined
    }>
  ) =>
    Effect.gen(function* () {
      const toolkit = yield* GuardedToolkit.withExtensionTools(Own)
      const turn = () => [
        ...calls.map((c, i) => ScriptedModel.toolCall(`m${i}`, c.name, c.params)),
        ScriptedModel.finish("tool-calls")
      ]
      const model = yield* ScriptedModel.make([turn, turn])
      const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      const answers = yield* GuardedToolkit.resolveApprovals(toolkit, response.content)
      yield* LanguageModel.generateText({
        prompt: Prompt.concat(Prompt.concat(Prompt.make("go"), Prompt.fromResponseParts(response.content)), answers),
        toolkit
      }).pipe(Effect.provideService(LanguageModel.LanguageModel, model))
      yield* LanguageModel.streamText({ prompt: "go", toolkit }).pipe(
        Stream.runDrain,
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      for (const [i, c] of calls.entries()) {
        const results = yield* toolkit
          .handle(c.name, c.params, `h${i}`, c.options)
          .pipe(Effect.flatMap(Stream.runCollect))
        for (const r of results) assert.isTrue(r.isFailure)
      }
      return yield* AuditLog.use((a) => a.entries)
    })

  it("tools × args × parse options × a guard that denies (or asks, answered no) everything: no handler ever runs", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 4 }), fc.boolean(), async (calls, ask) => {
        ran.length = 0
        invoked.length = 0
        const audit = await Effect.runPromise(
          session(calls).pipe(
            Effect.provide(ownHandlers),
            Effect.provide(Approval.Approver.layerDeny),
            Effect.provide(host([ask ? askAll : denyAll, provider]))
          )
        )
        assert.deepStrictEqual(ran, [])
        assert.deepStrictEqual(invoked, [])
        // Every call the toolkit was handed is in the audit as a tool_call.
        const audited = new Set(audit.filter((r) => r.event === "tool_call").map((r) => r.call_id))
        for (const i of calls.keys()) assert.isTrue(audited.has(`h${i}`) && audited.has(`m${i}`), `call ${i} audited`)
        assert.deepStrictEqual(
          audit.filter((r) => r.event === "invoke_tool" || r.event === "tool_result"),
          []
        )
      }),
      { numRuns: 60 }
    )
  }, 120_000)
})

describe("no tool runs unjudged: a tool the provider runs itself", () => {
  // Run by the provider (web search): its calls never reach a handler, and its results reach the model directly.
  const WebSearch = Tool.providerDefined({
    id: "test.web_search",
    customName: "web_search",
    providerName: "web_search",
    parameters: Schema.Struct({ query: Schema.String }),
    success: Schema.String
  })()
  // Defined by the provider but run here, by a handler: judged like any other.
  const Terminal = Tool.providerDefined({
    id: "test.terminal",
    customName: "terminal",
    providerName: "terminal",
    parameters: Schema.Struct({ command: Schema.String }),
    success: Schema.String,
    requiresHandler: true
  })({})

  it.effect(
    "is refused when the toolkit is guarded (ProviderExecutedTool, naming it); one run by a handler is not",
    () =>
      Effect.gen(function* () {
        const withSearch = Toolkit.make(Bash, WebSearch)
        const refused = yield* Effect.flip(
          GuardedToolkit.guard(
            withSearch.pipe(Effect.provide(withSearch.toLayer({ bash: () => Effect.succeed("ran") })))
          )
        )
        assert.strictEqual(refused._tag, "ProviderExecutedTool")
        assert.deepStrictEqual(refused._tag === "ProviderExecutedTool" ? refused.tools : [], ["web_search"])
        assert.include(refused.message, "web_search: run by the model's provider itself")
        const withTerminal = Toolkit.make(Terminal)
        const toolkit = yield* GuardedToolkit.guard(
          withTerminal.pipe(Effect.provide(withTerminal.toLayer({ terminal: () => Effect.succeed("ran") })))
        )
        assert.deepStrictEqual(Object.keys(toolkit.tools), ["terminal"])
      }).pipe(Effect.provide(host([denyAll])))
  )
})
