import type { Approval, ExtensionHost } from "@abhed/host"
import { Effect, Schema } from "effect"
import { type AiError, LanguageModel, Prompt, type Tool, type Toolkit } from "effect/ai"
import type { ContextWithheld } from "./ContextWithheld.ts"
import * as ExtensionToolkit from "./ExtensionToolkit.ts"
import * as GuardedToolkit from "./GuardedToolkit.ts"
import * as PromptHooks from "./PromptHooks.ts"
import type { ProviderExecutedTool } from "./ProviderExecutedTool.ts"

/**
 * The agent loop, guarded, in one call: the agent's tools plus the extensions' (`GuardedToolkit.withExtensionTools`),
 * `before_agent_start` once, then model turns, each with `context` applied to the history, the calls judged by
 * `tool_call` and `tool_result`, and the approvals answered by the host's `Approver` (`resolveApprovals`), until the
 * model stops calling tools.
 */

/** The model still called tools after `maxTurns` turns. `history` is the whole conversation so far. */
export class TurnLimitReached extends Schema.TaggedError<TurnLimitReached>()("TurnLimitReached", {
  maxTurns: Schema.Number,
  history: Prompt.Prompt
}) {
  override get message() {
    return `the model was still calling tools after ${this.maxTurns} turns`
  }
}

export interface Done {
  /** The whole conversation: the prompt (system text as the extensions extended it), every response and result. */
  readonly history: Prompt.Prompt
  /** The model's text in its last turn. */
  readonly text: string
  /** Model calls made. */
  readonly turns: number
}

/** How many model calls `run` makes at most, unless told. */
export const DefaultMaxTurns = 32

type AgentTool<Tools extends Record<string, Tool.Any>> = ExtensionToolkit.WithExtensions<Tools>[string]

/**
 * Runs the conversation `prompt` (a user message, or messages with a system one) with `toolkit` (a Toolkit, its
 * handlers provided as a layer, or a handled toolkit) and the extensions' tools, and returns when the model is
 * done. Needs the `LanguageModel`, the `ExtensionHost`, an `Approval.Approver` (`Approver.layerDeny` when nobody is
 * there to ask) and what the tools' handlers need; fails with `ContextWithheld` when a failing filter withheld the
 * context, with `ProviderExecutedTool` when `toolkit` has a tool the provider runs itself, and with
 * `TurnLimitReached` after `maxTurns` model calls.
 */
export const run = <Tools extends Record<string, Tool.Any>, E = never, R = never>(options: {
  readonly toolkit: Toolkit.WithHandler<Tools> | Effect.Effect<Toolkit.WithHandler<Tools>, E, R>
  readonly prompt: Prompt.RawInput
  readonly maxTurns?: number | undefined
}): Effect.Effect<
  Done,
  E | AiError.AiError | ContextWithheld | ProviderExecutedTool | TurnLimitReached | Tool.HandlerError<AgentTool<Tools>>,
  R | LanguageModel.LanguageModel | ExtensionHost | Approval.Approver | Tool.HandlerServices<AgentTool<Tools>>
> =>
  Effect.gen(function* () {
    const maxTurns = options.maxTurns ?? DefaultMaxTurns
    const toolkit = yield* GuardedToolkit.withExtensionTools(options.toolkit)
    let history = yield* PromptHooks.applySystem(Prompt.make(options.prompt))
    for (let turn = 1; turn <= maxTurns; turn++) {
      // Only the messages every extension keeps go to the model; the history keeps them all.
      const response = yield* LanguageModel.generateText({ prompt: yield* PromptHooks.applyContext(history), toolkit })
      // Asks become tool-approval-requests: the Approver answers, and the approved calls run here.
      const approvals = yield* GuardedToolkit.resolveApprovals(toolkit, response.content)
      history = Prompt.concat(Prompt.concat(history, Prompt.fromResponseParts(response.content)), approvals)
      // Done when nothing is left for the model to read: no call ran or was answered this turn (whatever finish
      // reason the provider gave: some say "stop" after calling tools).
      if (response.toolCalls.length === 0 && approvals.content.length === 0) {
        return { history, text: response.text, turns: turn }
      }
    }
    return yield* new TurnLimitReached({ maxTurns, history })
  })
