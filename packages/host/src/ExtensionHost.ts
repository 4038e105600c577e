import {
  ask as askVerdict,
  combineCompact,
  combineKeep,
  combineSystem,
  combineTools,
  decide,
  deny as denyVerdict,
  evaluatePolicy,
  evaluateRules,
  fromToolCallReply,
  IsErrorReducer,
  join,
  none,
  settleEffect,
  sortByName,
  unsettledReason,
  VerdictReducer,
  type AcceptedTool,
  type PolicyDecision,
  type PolicyHook,
  type SettleOutcome,
  type Reason,
  type RejectionReason,
  type RoundReply,
  type Verdict
} from "@abhed/core"
import {
  Defaults,
  shapeJson,
  ToolNameRule,
  unsendableField,
  type Config,
  type JsonObject,
  type PolicyConfig,
  type RequestBody
} from "@abhed/protocol"
import { Context, Effect, type FileSystem, Layer, type Path, Scope } from "effect"
import { AuditLog, type AuditRound } from "./AuditLog.ts"
import { auditRound, encodeRound, fanOut, makeRoundContext, roundField } from "./dispatch/Round.ts"
import { dispatch, hostReason, refuse, single, type DispatchContext, type Dispatched } from "./dispatch/Dispatch.ts"
import { exchange, onFailure, type Exchange } from "./dispatch/Exchange.ts"
import { type ConfigInvalid, type ConfigUnreadable, loadConfig } from "./ConfigLoader.ts"
import type { Extension, ExtensionStatus } from "./Extension.ts"
import * as ProcessExtension from "./ProcessExtension.ts"
import { DuplicateExtensionNames, ToolOwnerUnavailable, UnknownTool } from "./HostError.ts"
import * as IdCounter from "./IdCounter.ts"
import type {
  CompactOutcome,
  ContextOutcome,
  InvokeToolInput,
  InvokeToolOutcome,
  SystemOutcome,
  ToolCallInput,
  ToolCallOutcome,
  ToolResultInput,
  ToolResultOutcome,
  ToolsOutcome
} from "./Outcome.ts"

/** What the agent calls: one method per event (docs/design.md#wire-protocol). */
export interface ExtensionHostShape {
  readonly toolCall: (call: ToolCallInput) => Effect.Effect<ToolCallOutcome>
  readonly toolResult: (result: ToolResultInput) => Effect.Effect<ToolResultOutcome>
  readonly context: (messages: ReadonlyArray<unknown>) => Effect.Effect<ContextOutcome>
  readonly beforeAgentStart: (system: string) => Effect.Effect<SystemOutcome>
  readonly beforeCompact: (messages: ReadonlyArray<unknown>) => Effect.Effect<CompactOutcome>
  /** Asks the subscribers again (the startup answer is in `tools`). */
  readonly listTools: Effect.Effect<ToolsOutcome>
  /** The tools accepted at startup, after collisions. */
  readonly tools: Effect.Effect<ReadonlyArray<AcceptedTool>>
  readonly invokeTool: (call: InvokeToolInput) => Effect.Effect<InvokeToolOutcome, UnknownTool | ToolOwnerUnavailable>
  readonly status: Effect.Effect<ReadonlyArray<ExtensionStatus>>
}

export interface HostOptions {
  readonly sessionId: string
  readonly policy?: PolicyConfig | undefined
  readonly policyHooks?: ReadonlyArray<PolicyHook> | undefined
  readonly maxRewriteRounds?: number | undefined
  readonly builtinTools?: ReadonlyArray<string> | undefined
}

/** HostOptions from a decoded config file, for the layers that take one. */
export const optionsFromConfig = (
  config: Config,
  options: {
    readonly sessionId: string
    readonly policyHooks?: ReadonlyArray<PolicyHook> | undefined
    readonly builtinTools?: ReadonlyArray<string> | undefined
  }
): HostOptions => ({
  sessionId: options.sessionId,
  policy: config.policy,
  policyHooks: options.policyHooks,
  maxRewriteRounds: config.max_rewrite_rounds,
  // The agent knows its own tools; the config may name more. An extension may shadow none of them.
  builtinTools: [...new Set([...config.builtin_tools, ...(options.builtinTools ?? [])])].sort()
})

/** A keep element for a note: a number as it is, anything else by its shape (strings by their length: `shapeJson`). */
const showIndex = (i: unknown): string => (typeof i === "number" ? String(i) : shapeJson(i, 40))

const rejection: { readonly [R in RejectionReason]: string } = {
  invalid_name: `not a valid tool name (${ToolNameRule}; not __proto__)`,
  builtin: "collides with a built-in tool (names compare ignoring case)",
  duplicate: "declared more than once (names compare ignoring case)",
  input_schema: "invalid input_schema"
}

/** A tool name for a note, with every character outside printable ASCII escaped: a look-alike must show. */
const quoteToolName = (name: string): string =>
  `"${name.replace(/[^\x20-\x7e]|["\\]/g, (c) => c === "\"" || c === "\\" ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}"`


/**
 * The host over a set of extensions (process-backed or fakes). Runs the startup handshake (session_start, then
 * list_tools) and returns the service. Extensions are owned by the caller's scope.
 */
export const make = (
  extensionsInput: ReadonlyArray<Extension>,
  options: HostOptions
): Effect.Effect<ExtensionHostShape, never, AuditLog | Scope.Scope> => Effect.gen(function*() {
  const audit = yield* AuditLog
  // Canonical order is name order (docs/design.md#combination): config order never reaches any outcome or record.
  const extensions = sortByName(extensionsInput)
  const duplicates = extensions.filter((x, i) => i > 0 && extensions[i - 1]?.name === x.name).map((x) => x.name)
  if (duplicates.length > 0) {
    // Names are the canonical order and the identity in every record: two alike would let load order decide.
    return yield* Effect.die(new DuplicateExtensionNames({ names: [...new Set(duplicates)] }))
  }
  const sessionId = options.sessionId
  const nextCallId = IdCounter.make("c-")
  const ctx: DispatchContext = {
    ...makeRoundContext(extensions),
    audit,
    recording: audit.enabled !== false,
    sessionId,
    policy: options.policy ?? Defaults.policy,
    hooks: options.policyHooks ?? [],
    maxRounds: options.maxRewriteRounds ?? Defaults.max_rewrite_rounds,
    builtin: options.builtinTools ?? Defaults.builtin_tools,
    callIdOf: (given) => given ?? nextCallId(),
    seq: 0
  }
  const { recording, policy, hooks, maxRounds, builtin, reported, callIdOf } = ctx

  /** One extension's verdict in a tool_call round: its reply's, or its on_failure's when it failed. */
  const verdictOf = (x: Exchange<"tool_call">): RoundReply<JsonObject, Verdict> => {
    const name = x.extension.name
    if (x.reply !== undefined) return { name, proposal: x.reply.args, value: fromToolCallReply(name, x.reply) }
    const mode = onFailure(x)
    const failure = x.failure ?? ""
    const verdict = mode === "deny" ? denyVerdict(name, failure) : mode === "ask" ? askVerdict(name, failure) : none
    return { name, proposal: undefined, value: verdict }
  }

  // ---- tool_call: settle the args, join the verdicts over all rounds, then the policy on the settled args.
  // The common case (one round, nobody rewrites, no policy hook) is: the fan-out, then synchronous steps.
  const toolCall = (call: ToolCallInput): Effect.Effect<ToolCallOutcome> =>
    Effect.suspend(() => {
      const call_id = callIdOf(call.call_id)
      const unsendable = unsendableField("args", call.args)
      if (unsendable !== undefined) {
        // Denied, and nothing of the args is kept: the call must not run, and they cannot be encoded safely.
        const outcome: ToolCallOutcome = { decision: "deny", reasons: hostReason(unsendable), args: {}, rounds: 0 }
        return refuse(ctx, "tool_call", call_id, unsendable, outcome, call.tool)
      }
      if (call.refused !== undefined) {
        // Refused by the agent before any extension could judge it: audited with its args, sent to nobody.
        const outcome: ToolCallOutcome = { decision: "deny", reasons: hostReason(call.refused), args: {}, rounds: 0 }
        const notes = recording ? [`not sent to any extension: ${call.refused}`] : []
        return dispatch(ctx, "tool_call", call_id, Effect.succeed({ outcome, rounds: [], notes }), { tool: call.tool, args: call.args })
      }
      const auditRounds: Array<AuditRound> = []
      const settled = settleEffect<JsonObject, Verdict, never, never>({
        initial: call.args,
        reducer: VerdictReducer,
        stop: (v) => v.level === "deny",
        maxRounds,
        round: (args, round) =>
          Effect.map(
            fanOut(ctx, "tool_call", { event: "tool_call", session_id: sessionId, call_id, tool: call.tool, args, ...roundField(round) }),
            ({ exchanges, skipped }) => {
              if (recording) auditRounds.push(auditRound(round, exchanges, skipped))
              return exchanges.map(verdictOf)
            }
          )
      })
      const finish = (outcome: SettleOutcome<JsonObject, Verdict>, policyDecision: PolicyDecision): Dispatched<ToolCallOutcome> => {
        const verdict = outcome._tag === "Unsettled"
          ? join(outcome.value, {
            level: "deny",
            // Everyone who proposed in any round: with two fighters, the last round names only one of them.
            reasons: outcome.fighters.map((name) => ({ extension: name, reason: unsettledReason(outcome.fighters) }))
          })
          : outcome.value
        const decision = decide(policyDecision, verdict)
        return {
          outcome: {
            decision: decision.decision,
            reasons: decision.reasons,
            args: outcome.payload,
            rounds: outcome.rounds,
            rewrittenBy: outcome.adopted
          },
          rounds: auditRounds,
          notes: recording ? [`policy: ${policyDecision.level} (${policyDecision.source})`, `settling: ${outcome._tag}`] : []
        }
      }
      return dispatch(
        ctx,
        "tool_call",
        call_id,
        Effect.flatMap(settled, (outcome) =>
          // No hooks (the common case): the rules are plain synchronous code.
          hooks.length === 0
            ? Effect.succeed(finish(outcome, evaluateRules(policy, { tool: call.tool, args: outcome.payload })))
            : Effect.map(evaluatePolicy(policy, hooks, { tool: call.tool, args: outcome.payload }), (d) => finish(outcome, d))),
        { tool: call.tool, args: call.args }
      )
    })

  // ---- tool_result: settle the content; is_error only ever raised; any failing on_failure≠ignore withholds
  const toolResult = (input: ToolResultInput): Effect.Effect<ToolResultOutcome> =>
    Effect.suspend(() => {
      const call_id = callIdOf(input.call_id)
      const unsendable = unsendableField("args", input.args)
      if (unsendable !== undefined) {
        const outcome: ToolResultOutcome = { content: `[withheld: ${unsendable}]`, is_error: true, rounds: 0 }
        return refuse(ctx, "tool_result", call_id, unsendable, outcome, input.tool)
      }
      const auditRounds: Array<AuditRound> = []
      const withheldBy: Array<string> = []
      const settled = settleEffect<string, boolean, never, never>({
        initial: input.content,
        reducer: IsErrorReducer,
        stop: () => false,
        maxRounds,
        round: (content, round) =>
          Effect.map(
            fanOut(ctx, "tool_result", {
              event: "tool_result",
              session_id: sessionId,
              call_id,
              tool: input.tool,
              args: input.args,
              content,
              is_error: input.is_error,
              ...roundField(round)
            }),
            ({ exchanges, skipped }) => {
              if (recording) auditRounds.push(auditRound(round, exchanges, skipped))
              for (const x of exchanges) if (onFailure(x) !== "ignore" && x.failure !== undefined) withheldBy.push(x.failure)
              return exchanges.map((x): RoundReply<string, boolean> => ({
                name: x.extension.name,
                proposal: x.reply?.content,
                value: x.reply?.is_error === true
              }))
            }
          )
      })
      return dispatch(
        ctx,
        "tool_result",
        call_id,
        Effect.map(settled, (outcome): Dispatched<ToolResultOutcome> => {
          const isError = input.is_error || outcome.value
          const result: ToolResultOutcome = withheldBy.length > 0
            ? { content: `[withheld: ${[...new Set(withheldBy)].sort().join("; ")}]`, is_error: true, rounds: outcome.rounds }
            : outcome._tag === "Unsettled"
            ? {
              content: `[withheld: ${unsettledReason(outcome.fighters)}]`,
              is_error: true,
              rounds: outcome.rounds
            }
            : { content: outcome.payload, is_error: isError, rounds: outcome.rounds }
          return { outcome: result, rounds: auditRounds, notes: recording ? [`settling: ${outcome._tag}`] : [] }
        }),
        { tool: input.tool, args: input.args }
      )
    })

  // ---- context: the intersection of the kept sets; a failing filter whose on_failure is not ignore keeps nothing
  const context = (messages: ReadonlyArray<unknown>) => {
    const unsendable = unsendableField("messages", messages)
    if (unsendable !== undefined) {
      const outcome: ContextOutcome = { keep: [], messages: [], withheld: hostReason(unsendable) }
      return refuse(ctx, "context", undefined, unsendable, outcome)
    }
    return single(ctx, "context", { event: "context", session_id: sessionId, messages }, (replies, exchanges) => {
      // "ask" acts as "deny": nobody can be asked mid-turn (docs/design.md#failures). Exchanges are in name order.
      const withheld: Array<Reason> = []
      for (const x of exchanges) {
        if (x.reply === undefined && x.failure !== undefined && onFailure(x) !== "ignore") {
          withheld.push({ extension: x.extension.name, reason: x.failure })
        }
      }
      const { keep, outOfRange } = combineKeep(messages.length, replies)
      const notes = recording
        ? outOfRange.map((o) => `${o.extension}: keep indices that name no message ignored: ${o.indices.map(showIndex).join(", ")}`)
        : []
      if (withheld.length > 0) {
        const outcome: ContextOutcome = { keep: [], messages: [], withheld }
        return { outcome, notes: recording ? [...notes, ...withheld.map((w) => `context withheld: ${w.reason}`)] : [] }
      }
      const kept: Array<unknown> = []
      for (const i of keep) kept.push(messages[i])
      return { outcome: { keep, messages: kept, withheld }, notes }
    })
  }

  const beforeAgentStart = (system: string) =>
    single(ctx, "before_agent_start", { event: "before_agent_start", session_id: sessionId, system }, (replies) => ({
      outcome: { system: combineSystem(system, replies) } satisfies SystemOutcome,
      notes: []
    }))

  const beforeCompact = (messages: ReadonlyArray<unknown>) => {
    const unsendable = unsendableField("messages", messages)
    // Cancelled: the restrictive answer (nothing is compacted that no extension could see).
    if (unsendable !== undefined) return refuse(ctx, "before_compact", undefined, unsendable, { cancel: true, summary: null } satisfies CompactOutcome)
    return single(ctx, "before_compact", { event: "before_compact", session_id: sessionId, messages }, (replies) => {
      const { cancel, cancelledBy, summary } = combineCompact(replies)
      return {
        outcome: { cancel, summary: cancel ? null : summary } satisfies CompactOutcome,
        notes: cancel ? [`cancelled by ${cancelledBy.join(", ")}`] : []
      }
    })
  }

  const rejectedNote = (r: ToolsOutcome["rejected"][number]) =>
    `tool ${quoteToolName(r.name)} rejected for ${r.extensions.join(", ")}: ${rejection[r.reason]}${r.detail !== undefined ? `: ${r.detail}` : ""}`
  const listTools = single(ctx, "list_tools", { event: "list_tools", session_id: sessionId }, (replies) => {
    const outcome = combineTools(builtin, replies)
    return { outcome: outcome satisfies ToolsOutcome, notes: outcome.rejected.map(rejectedNote) }
  })

  // ---- startup: session_start, then list_tools (docs/design.md#lifecycle)
  yield* single(ctx, "session_start", { event: "session_start", session_id: sessionId }, () => ({ outcome: {}, notes: [] }))
  const startupTools = yield* listTools
  // Said where the operator looks, not only in the audit: a rejected tool is one the model will never see.
  yield* Effect.forEach(startupTools.rejected, (r) => Effect.logWarning(rejectedNote(r)), { discard: true })
  // At close, session_end is one more dispatch: in parallel, bounded by each timeout, and in the audit log.
  // It runs before the extensions' own close sequences (finalizers run in reverse), which then skip it. Not to an
  // extension still busy at close: nothing else runs then, so its request is one whose caller went away (an
  // interrupted agent, Ctrl-C), and session_end would wait for that reply, then for its own (a timeout each).
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      const busy = extensions.filter((x) => x.idle?.() === false).map((x) => x.name)
      const note = busy.length === 0 ? [] : [`session_end not sent to ${busy.join(", ")}: still busy with a request whose caller went away`]
      return Effect.asVoid(
        single(ctx, "session_end", { event: "session_end", session_id: sessionId }, () => ({ outcome: {}, notes: note }), new Set(busy))
      )
    })
  )
  // Fixed at startup: `listTools` asks again and reports, but what the agent may invoke stays what was accepted here.
  const tools: ReadonlyArray<AcceptedTool> = startupTools.accepted

  const invokeTool = (call: InvokeToolInput) =>
    Effect.gen(function*() {
      const entry = tools.find((t) => t.tool.name === call.tool)
      if (entry === undefined) return yield* new UnknownTool({ tool: call.tool })
      const owner = extensions.find((x) => x.name === entry.extension)
      if (owner === undefined) return yield* new UnknownTool({ tool: call.tool })
      const call_id = callIdOf(call.call_id)
      const unsendable = unsendableField("args", call.args)
      if (unsendable !== undefined) {
        // Not sent to the owner: an error result the model can read, like any failed tool.
        return yield* refuse(ctx, "invoke_tool", call_id, unsendable, { result: `[withheld: ${unsendable}]`, is_error: true } satisfies InvokeToolOutcome, call.tool)
      }
      const value: RequestBody<"invoke_tool"> = {
        event: "invoke_tool",
        session_id: sessionId,
        call_id,
        tool: call.tool,
        args: call.args
      }
      // Routed to the one owner only, whatever its `events` say: it declared the tool.
      const result = yield* dispatch(
        ctx,
        "invoke_tool",
        call_id,
        Effect.map(exchange(owner, encodeRound(ctx, "invoke_tool", value), reported), (x) => {
          const outcome = x.reply !== undefined
            ? { _tag: "ok" as const, result: x.reply.result ?? null, is_error: x.reply.is_error === true }
            : { _tag: "failed" as const, cause: x.error ?? x.status }
          return { outcome, rounds: recording ? [auditRound(1, [x], [])] : [], notes: [] }
        }),
        { tool: call.tool, args: call.args }
      )
      if (result._tag === "failed") {
        return yield* new ToolOwnerUnavailable({ tool: call.tool, extension: owner.name, cause: result.cause })
      }
      return { result: result.result, is_error: result.is_error } satisfies InvokeToolOutcome
    })

  return {
    toolCall,
    toolResult,
    context,
    beforeAgentStart,
    beforeCompact,
    listTools,
    tools: Effect.succeed(tools),
    invokeTool,
    status: Effect.forEach(extensions, (x) => x.status)
  } satisfies ExtensionHostShape
})

/** Build the service from already-acquired extensions (fakes, or your own). */
const layerFromExtensions = <R>(
  extensions: Effect.Effect<ReadonlyArray<Extension>, never, R>,
  options: HostOptions
): Layer.Layer<ExtensionHost, never, AuditLog | Exclude<R, Scope.Scope>> =>
  Layer.effect(ExtensionHost, Effect.flatMap(extensions, (xs) => make(xs, options)))

export interface ProcessHostOptions {
  readonly sessionId: string
  /** The config file's folder: relative `cwd`s resolve against it. */
  readonly baseDir: string
  /** Compiled-in policy hooks, evaluated before the config's rules (docs/design.md#combination). */
  readonly policyHooks?: ReadonlyArray<PolicyHook> | undefined
  /** The agent's own tools, added to the config's `builtin_tools`: no extension may declare one of these. */
  readonly builtinTools?: ReadonlyArray<string> | undefined
  /** Longest reply line in bytes (default 16 MiB). */
  readonly maxLineBytes?: number | undefined
}

/**
 * The host over real processes, one per configured extension, spawned concurrently. Each is a scoped resource:
 * when the layer's scope closes, each gets `session_end`, then stdin closed, a grace, SIGTERM, SIGKILL.
 */
const layer = (
  config: Config,
  options: ProcessHostOptions
): Layer.Layer<ExtensionHost, never, AuditLog> =>
  layerFromExtensions(
    Effect.gen(function*() {
      // Each extension in a scope of its own, under one that closes them all at once: every close may wait
      // session_end's timeout and two graces, and eight hung extensions closed one after another would take
      // eight times as long. Within one extension the close sequence keeps its order.
      const all = yield* Scope.fork(yield* Effect.scope, "parallel")
      return yield* Effect.forEach(
        config.extensions,
        (x) =>
          Effect.flatMap(Scope.fork(all, "sequential"), (own) =>
            ProcessExtension.make(x, {
              sessionId: options.sessionId,
              baseDir: options.baseDir,
              ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {})
            }).pipe(Scope.provide(own))),
        { concurrency: "unbounded" }
      )
    }),
    optionsFromConfig(config, options)
  )

/**
 * The host over real processes from a config file: reads and decodes `file` (relative to the current directory),
 * then `layer(config, { ...options, baseDir: the file's folder })`. Fails with `ConfigUnreadable` or
 * `ConfigInvalid` (every problem, with its path) before any extension starts.
 */
const layerFromFile = (
  file: string,
  options: Omit<ProcessHostOptions, "baseDir">
): Layer.Layer<
  ExtensionHost,
  ConfigUnreadable | ConfigInvalid,
  AuditLog | FileSystem.FileSystem | Path.Path
> => Layer.unwrap(Effect.map(loadConfig(file), (loaded) => layer(loaded.config, { ...options, baseDir: loaded.baseDir })))

/**
 * The extension host service. Layers:
 * - `ExtensionHost.layerFromFile(path, { sessionId })`: over real processes, from an `abhed.json` (needs the
 *   platform's `FileSystem` and `Path`, e.g. `NodeServices.layer`, and an `AuditLog`);
 * - `ExtensionHost.layer(config, { sessionId, baseDir })`: the same from a decoded config;
 * - `ExtensionHost.layerFromExtensions(acquire, options)`: over extensions you acquire (fakes, or your own);
 * - `ExtensionHost.layerFake(fakes, options)`: over in-process fakes;
 * - `ExtensionHost.layerMock(partial)`: a plain mock for agent tests (a missing member is a defect when called).
 */
export class ExtensionHost extends Context.Service<ExtensionHost, ExtensionHostShape>()("@abhed/host/ExtensionHost") {
  static readonly make = make
  static readonly layer = layer
  static readonly layerFromFile = layerFromFile
  static readonly layerFromExtensions = layerFromExtensions
  /** Over in-process fakes (`FakeExtension.make` / `fromReplies`): every host rule, no processes. */
  static readonly layerFake = (
    fakes: ReadonlyArray<Effect.Effect<Extension, never, Scope.Scope>>,
    options: HostOptions
  ): Layer.Layer<ExtensionHost, never, AuditLog> => layerFromExtensions(Effect.all(fakes), options)
  static readonly layerMock = (service: Partial<ExtensionHostShape>): Layer.Layer<ExtensionHost> =>
    Layer.mock(ExtensionHost, service)
}
