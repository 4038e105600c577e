import type { AcceptedTool, LayerPolicy, PolicyHook } from "@abhed/core"
import type { Config, PolicyConfig } from "@abhed/protocol"
import type { Effect } from "effect"
import type { ExtensionStatus } from "./Extension.ts"
import type { ToolOwnerUnavailable, UnknownTool } from "./HostError.ts"
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
import type { Reloading, ReloadInput, ReloadRejected, ReloadReport } from "./Reload.ts"

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
  /**
   * Take a new config within the session (docs/embedding.md#reload): unchanged extensions keep running, changed
   * ones restart, removed ones get `session_end`, added ones start and get `session_start`; calls already running
   * finish over the set they began with. Fails with `ReloadRejected` (and changes nothing) on a config it cannot run.
   */
  readonly reload: (next: ReloadInput) => Effect.Effect<ReloadReport, ReloadRejected>
  /**
   * Which set is in force: 0 at startup, one more at each reload that changed the set (an extension started,
   * stopped or changed, a setting changed; not the same config read again). Read it before a `toolCall`: while
   * it is unchanged, that outcome is the set in force's; once it changed (an approval waited across a reload),
   * judge the call again before it runs (docs/embedding.md#reload).
   */
  readonly generation: Effect.Effect<number>
}

export interface HostOptions {
  readonly sessionId: string
  readonly policy?: PolicyConfig | undefined
  /** One policy per config layer, each evaluated and the decisions joined (stricter wins); replaces `policy`. */
  readonly policies?: ReadonlyArray<LayerPolicy> | undefined
  readonly policyHooks?: ReadonlyArray<PolicyHook> | undefined
  readonly maxRewriteRounds?: number | undefined
  readonly builtinTools?: ReadonlyArray<string> | undefined
  /** How a reload starts extensions (the process host sets it); without it a reload can only keep or remove. */
  readonly reloading?: Reloading | undefined
}

/** HostOptions from a decoded config file, for the layers that take one. */
export const optionsFromConfig = (
  config: Config,
  options: {
    readonly sessionId: string
    readonly policies?: ReadonlyArray<LayerPolicy> | undefined
    readonly policyHooks?: ReadonlyArray<PolicyHook> | undefined
    readonly builtinTools?: ReadonlyArray<string> | undefined
  }
): HostOptions => ({
  sessionId: options.sessionId,
  policy: config.policy,
  policies: options.policies,
  policyHooks: options.policyHooks,
  maxRewriteRounds: config.max_rewrite_rounds,
  // The agent knows its own tools; the config may name more. An extension may shadow none of them.
  builtinTools: [...new Set([...config.builtin_tools, ...(options.builtinTools ?? [])])].sort()
})
