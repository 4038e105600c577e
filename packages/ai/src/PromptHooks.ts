import { ExtensionHost } from "@abhed/host"
import { Effect, Schema } from "effect"
import { Prompt } from "effect/ai"
import { ContextWithheld } from "./ContextWithheld.ts"

/**
 * The prompt-side events (docs/design.md#wire-protocol) applied to effect/ai `Prompt`s. Extensions see each message
 * encoded as JSON, the way effect/ai serializes it (`{"role":"user","content":"…","options":{}}`; parts as
 * `{"type":"text","text":"…"}`).
 */

const encodePrompt = Schema.encodeSync(Prompt.Prompt)

const messagesOf = (prompt: Prompt.Prompt): ReadonlyArray<unknown> => encodePrompt(prompt).content

/**
 * `context`, before each model call: the prompt with only the messages every extension keeps, in order. When a
 * failure withheld the whole context (a failing filter with `on_failure: "deny" | "ask"`), fails with
 * `ContextWithheld`: stop the turn rather than send what the filter was there to hold back.
 */
export const applyContext = (prompt: Prompt.Prompt): Effect.Effect<Prompt.Prompt, ContextWithheld, ExtensionHost> =>
  Effect.gen(function* () {
    const host = yield* ExtensionHost
    const { keep, withheld } = yield* host.context(messagesOf(prompt))
    if (withheld.length > 0) return yield* new ContextWithheld({ reasons: withheld })
    const kept: Array<Prompt.Message> = []
    for (const i of keep) {
      const message = prompt.content[i]
      if (message !== undefined) kept.push(message)
    }
    return Prompt.fromMessages(kept)
  })

/** The prompt's system text: its system messages, joined by a blank line ("" when there is none). */
export const systemOf = (prompt: Prompt.Prompt): string =>
  prompt.content.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n\n")

/**
 * `before_agent_start`, once at the start: the prompt with its system message replaced by the system text plus
 * what extensions append (joined in name order, separated by a blank line).
 */
export const applySystem = (prompt: Prompt.Prompt): Effect.Effect<Prompt.Prompt, never, ExtensionHost> =>
  Effect.gen(function* () {
    const host = yield* ExtensionHost
    const { system } = yield* host.beforeAgentStart(systemOf(prompt))
    return Prompt.setSystem(prompt, system)
  })

export type Compaction =
  /** An extension cancelled the compaction: keep the history as it is. */
  | { readonly _tag: "Cancelled" }
  /** The summary to replace the history with: the extensions' (`by: "extensions"`) or the agent's own. */
  | { readonly _tag: "Summary"; readonly summary: string; readonly by: "extensions" | "agent" }

/**
 * `before_compact`, when the history is to be summarized: extensions may cancel, or supply the summary; when
 * none does, `summarize` (the agent's own summarization step, e.g. a model call) writes it.
 */
export const compact = <E, R>(
  prompt: Prompt.Prompt,
  summarize: (prompt: Prompt.Prompt) => Effect.Effect<string, E, R>
): Effect.Effect<Compaction, E, R | ExtensionHost> =>
  Effect.gen(function* () {
    const host = yield* ExtensionHost
    const out = yield* host.beforeCompact(messagesOf(prompt))
    if (out.cancel) return { _tag: "Cancelled" } as const
    if (out.summary !== null) return { _tag: "Summary", summary: out.summary, by: "extensions" } as const
    return { _tag: "Summary", summary: yield* summarize(prompt), by: "agent" } as const
  })
