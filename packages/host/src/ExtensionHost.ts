import {
  BeforeCompactRule,
  ContextRule,
  InvokeToolRule,
  sortByName,
  ToolCallRule,
  ToolResultRule,
  type AcceptedTool,
  type LayerPolicy,
  type PolicyHook
} from "@abhed/core"
import { Defaults, type Config, type ExtensionConfig } from "@abhed/protocol"
import { Context, Effect, type FileSystem, Layer, type Path, type Scope } from "effect"
import { AuditLog } from "./AuditLog.ts"
import { TelemetrySink } from "./TelemetrySink.ts"
import { makeRoundContext } from "./dispatch/Round.ts"
import { single, type DispatchContext } from "./dispatch/Dispatch.ts"
import * as BeforeAgentStart from "./dispatch/BeforeAgentStart.ts"
import * as BeforeCompact from "./dispatch/BeforeCompact.ts"
import * as ContextEvent from "./dispatch/Context.ts"
import * as InvokeTool from "./dispatch/InvokeTool.ts"
import * as ListTools from "./dispatch/ListTools.ts"
import * as ToolCall from "./dispatch/ToolCall.ts"
import * as ToolResult from "./dispatch/ToolResult.ts"
import { type ConfigInvalid, type ConfigUnreadable, loadConfig } from "./ConfigLoader.ts"
import type { Extension } from "./Extension.ts"
import * as ProcessExtension from "./ProcessExtension.ts"
import * as McpExtension from "./mcp/McpStart.ts"
import { DuplicateExtensionNames } from "./HostError.ts"
import * as IdCounter from "./IdCounter.ts"
import * as Reload from "./Reload.ts"
import { type ExtensionHostShape, type HostOptions, optionsFromConfig } from "./ExtensionHostShape.ts"
import type { Reloading } from "./Reload.ts"

export { type ExtensionHostShape, type HostOptions, optionsFromConfig }

/** Why a call once the host is closing or closed is refused. */
export const HostClosed = "the host is closed (its scope has ended): no extension can judge this"

/** The host over extensions (processes or fakes): session_start, then list_tools; the caller's scope owns them. */
export const make = (
  extensionsInput: ReadonlyArray<Extension>,
  options: HostOptions
): Effect.Effect<ExtensionHostShape, never, AuditLog | Scope.Scope> =>
  Effect.gen(function* () {
    const audit = yield* AuditLog
    const telemetry = yield* TelemetrySink
    // Canonical order is name order (docs/design.md#combination): config order never reaches any outcome or record.
    const extensions = sortByName(extensionsInput)
    const duplicates = extensions.filter((x, i) => i > 0 && extensions[i - 1]?.name === x.name).map((x) => x.name)
    if (duplicates.length > 0) {
      // Names are the canonical order and the identity in every record: two alike would let load order decide.
      return yield* Effect.die(new DuplicateExtensionNames({ names: [...new Set(duplicates)] }))
    }
    const sessionId = options.sessionId
    const nextCallId = IdCounter.make("c-")
    // What every dispatch shares, made once here. The pipeline lives in dispatch/: each event's file (ToolCall.ts,
    // ...) runs rounds (Round.ts: audience, round id, one encoding, fan-out) of exchanges (Exchange.ts: one extension,
    // one request), folds the replies by the event's rule, and records the dispatch (Dispatch.ts: span, metrics, audit).
    const ctx: DispatchContext = {
      ...makeRoundContext(extensions),
      audit,
      telemetry,
      recording: audit.enabled !== false || telemetry !== undefined,
      sessionId,
      policy: options.policy ?? Defaults.policy,
      policies: options.policies,
      hooks: options.policyHooks ?? [],
      maxRounds: options.maxRewriteRounds ?? Defaults.max_rewrite_rounds,
      builtin: options.builtinTools ?? Defaults.builtin_tools,
      callIdOf: (given) => given ?? nextCallId(),
      seq: 0
    }
    const listTools = ListTools.listTools(ctx)

    // ---- startup: session_start, then list_tools (docs/design.md#lifecycle)
    yield* single(ctx, "session_start", { event: "session_start", session_id: sessionId }, () => ({
      outcome: {},
      notes: []
    }))
    const startupTools = yield* listTools
    // Said where the operator looks, not only in the audit: rejected tools, and the extensions' warnings.
    yield* ListTools.sayAtStart(startupTools)
    // Fixed per set: `listTools` asks again and reports, but what the agent may invoke stays what was accepted at
    // startup (or at the last reload). Made before the finalizer below: what a reload starts closes after it.
    const sets = yield* Reload.makeSets(ctx, extensions, startupTools.accepted, options.reloading)
    // At close, session_end is one more dispatch: in parallel, bounded by each timeout, and in the audit log.
    // It runs before the extensions' own close sequences (finalizers run in reverse), which then skip it. Not to an
    // extension still busy at close: nothing else runs then, so its request is one whose caller went away (an
    // interrupted agent, Ctrl-C), and session_end would wait for that reply, then for its own (a timeout each).
    yield* Effect.addFinalizer(() =>
      sets.lock.withPermit(
        Effect.suspend(() => {
          sets.closed = true
          const { ctx, extensions } = sets.current
          const busy = extensions.filter((x) => x.idle?.() === false).map((x) => x.name)
          const note =
            busy.length === 0
              ? []
              : [`session_end not sent to ${busy.join(", ")}: still busy with a request whose caller went away`]
          return Effect.asVoid(
            single(
              ctx,
              "session_end",
              { event: "session_end", session_id: sessionId },
              () => ({ outcome: {}, notes: note }),
              new Set(busy)
            )
          )
        })
      )
    )

    // Each call runs over the set current when it begins (Reload.ts). A call once the host is closing or closed (a
    // toolkit or fiber that outlived the host's scope) reaches no extension: they are gone (a request to one hung),
    // and one counted dead under `on_failure: ignore` would pass it. It gets its event's fail-closed outcome at once,
    // recorded nowhere (the audit log closed with the scope).
    const open = <A, E>(closed: () => A, f: (s: Reload.ExtensionSet) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Reload.using(sets, f, closed)
    return {
      toolCall: (call) =>
        open(
          () => ToolCallRule.refused(HostClosed).outcome,
          (s) => ToolCall.toolCall(s.ctx, call)
        ),
      toolResult: (result) =>
        open(
          () => ToolResultRule.refused(HostClosed).outcome,
          (s) => ToolResult.toolResult(s.ctx, result)
        ),
      context: (messages) =>
        open(
          () => ContextRule.refused(HostClosed).outcome,
          (s) => ContextEvent.context(s.ctx, messages)
        ),
      beforeAgentStart: (system) =>
        open(
          () => ({ system }),
          (s) => BeforeAgentStart.beforeAgentStart(s.ctx, system)
        ),
      beforeCompact: (messages) =>
        open(
          () => BeforeCompactRule.refused(HostClosed).outcome,
          (s) => BeforeCompact.beforeCompact(s.ctx, messages)
        ),
      listTools: open(
        () => ({ accepted: [], rejected: [] }),
        (s) => ListTools.listTools(s.ctx)
      ),
      tools: Effect.sync((): ReadonlyArray<AcceptedTool> => sets.current.tools),
      invokeTool: (call) =>
        open(
          () => InvokeToolRule.refused(HostClosed).outcome,
          (s) => InvokeTool.invokeTool(s.ctx, s.tools, s.extensions, call)
        ),
      status: Effect.suspend(() => Effect.forEach(sets.current.extensions, (x) => x.status)),
      generation: Effect.sync(() => sets.generation),
      reload: (next) => Reload.reload(sets, next)
    } satisfies ExtensionHostShape
  })

/** Build the service from already-acquired extensions (fakes, or your own). */
const layerFromExtensions = <R>(
  extensions: Effect.Effect<ReadonlyArray<Extension>, never, R>,
  options: HostOptions
): Layer.Layer<ExtensionHost, never, AuditLog | Exclude<R, Scope.Scope>> =>
  Layer.effect(
    ExtensionHost,
    Effect.flatMap(extensions, (xs) => make(xs, options))
  )

export interface ProcessHostOptions {
  readonly sessionId: string
  /** The config file's folder: relative `cwd`s resolve against it. */
  readonly baseDir: string
  /** One policy per config layer (`loadLayers`), used instead of the config's one `policy`. */
  readonly policies?: ReadonlyArray<LayerPolicy> | undefined
  /** Compiled-in policy hooks, evaluated before the config's rules (docs/design.md#combination). */
  readonly policyHooks?: ReadonlyArray<PolicyHook> | undefined
  /** The agent's own tools, added to the config's `builtin_tools`: no extension may declare one of these. */
  readonly builtinTools?: ReadonlyArray<string> | undefined
  /** Longest reply line in bytes (default 16 MiB). */
  readonly maxLineBytes?: number | undefined
  /**
   * Folders whose files, named by an extension's command or arguments, are its scripts: a reload restarts an
   * extension whose script changed (default: `baseDir`).
   */
  readonly scriptRoots?: ReadonlyArray<string> | undefined
}

/**
 * The host over real processes, one per configured extension, spawned concurrently. Each is a scoped resource:
 * when the layer's scope closes, each gets `session_end`, then stdin closed, a grace, SIGTERM, SIGKILL.
 */
const layer = (config: Config, options: ProcessHostOptions): Layer.Layer<ExtensionHost, never, AuditLog> => {
  // Each extension in a scope of its own (Reload.startExtensions), so that a reload can close it alone.
  // An MCP server (`protocol: "mcp"`) is spoken to by the host itself (mcp/McpExtension.ts, loaded as one starts).
  const start = (x: ExtensionConfig) =>
    (x.protocol === "mcp" ? McpExtension.make : ProcessExtension.make)(x, {
      sessionId: options.sessionId,
      baseDir: options.baseDir,
      ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {})
    })
  const reloading: Reloading = {
    start,
    baseDir: options.baseDir,
    roots: options.scriptRoots ?? [options.baseDir],
    builtinTools: options.builtinTools ?? []
  }
  return layerFromExtensions(Reload.startExtensions(config.extensions, start), {
    ...optionsFromConfig(config, options),
    reloading
  })
}

/**
 * The host over real processes from a config file: reads and decodes `file` (relative to the current directory),
 * then `layer(config, { ...options, baseDir: the file's folder })`. Fails with `ConfigUnreadable` or
 * `ConfigInvalid` (every problem, with its path) before any extension starts.
 */
const layerFromFile = (
  file: string,
  options: Omit<ProcessHostOptions, "baseDir">
): Layer.Layer<ExtensionHost, ConfigUnreadable | ConfigInvalid, AuditLog | FileSystem.FileSystem | Path.Path> =>
  Layer.unwrap(Effect.map(loadConfig(file), (loaded) => layer(loaded.config, { ...options, baseDir: loaded.baseDir })))

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
  /** A mock never reloads unless it says so: `generation` stays 0. */
  static readonly layerMock = (service: Partial<ExtensionHostShape>): Layer.Layer<ExtensionHost> =>
    Layer.mock(ExtensionHost, { generation: Effect.succeed(0), ...service })
}
