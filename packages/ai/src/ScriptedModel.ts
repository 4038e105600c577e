import { Effect, Layer, Stream } from "effect"
import { LanguageModel, type Prompt, type Response } from "effect/ai"

/**
 * A `LanguageModel` that plays a script, for tests and examples with no network: each model call takes the next
 * turn, a function of the prompt it was sent (so a turn can read the tool results the previous one caused). After
 * the last turn, every call answers `finish: stop` with no content. `streamText` plays the same turns as a stream
 * (text as start/delta/end; reasoning and sources are not streamed).
 */
export type Turn = (prompt: Prompt.Prompt) => ReadonlyArray<Response.PartEncoded>

const usage = { inputTokens: {}, outputTokens: {} }

export const text = (value: string): Response.PartEncoded => ({ type: "text", text: value })

export const toolCall = (id: string, name: string, params: unknown): Response.PartEncoded => ({
  type: "tool-call",
  id,
  name,
  params
})

export const finish = (reason: "stop" | "tool-calls"): Response.PartEncoded => ({ type: "finish", reason, usage })

/** The prompts the model was sent, one per call, for assertions. */
export interface Transcript {
  readonly prompts: ReadonlyArray<Prompt.Prompt>
}

/** Every tool result a prompt showed the model, by call id: whether it failed, and the result as encoded. */
export const toolResults = (
  prompt: Prompt.Prompt | undefined
): ReadonlyMap<string, { readonly isFailure: boolean; readonly result: unknown }> => {
  const out = new Map<string, { readonly isFailure: boolean; readonly result: unknown }>()
  for (const message of prompt?.content ?? []) {
    if (message.role !== "tool") continue
    for (const part of message.content) {
      if (part.type === "tool-result") out.set(part.id, { isFailure: part.isFailure, result: part.result })
    }
  }
  return out
}

/** A turn's parts as a stream: text as start/delta/end, everything else as it is. */
const toStream = (parts: ReadonlyArray<Response.PartEncoded>): ReadonlyArray<Response.StreamPartEncoded> =>
  parts.flatMap((part, i): ReadonlyArray<Response.StreamPartEncoded> => {
    switch (part.type) {
      case "text":
        return [
          { type: "text-start", id: `text-${i}` },
          { type: "text-delta", id: `text-${i}`, delta: part.text },
          { type: "text-end", id: `text-${i}` }
        ]
      case "tool-call":
      case "finish":
      case "tool-result":
      case "tool-approval-request":
      case "file":
      case "response-metadata":
        return [part]
      default:
        return []
    }
  })

export const make = (turns: ReadonlyArray<Turn>): Effect.Effect<LanguageModel.LanguageModel & Transcript> =>
  Effect.gen(function* () {
    const prompts: Array<Prompt.Prompt> = []
    const next = (prompt: Prompt.Prompt): ReadonlyArray<Response.PartEncoded> => {
      const turn = turns[prompts.length]
      prompts.push(prompt)
      return turn === undefined ? [finish("stop")] : turn(prompt)
    }
    const model = yield* LanguageModel.make({
      generateText: (options) => Effect.sync(() => [...next(options.prompt)]),
      streamText: (options) => Stream.suspend(() => Stream.fromIterable(toStream(next(options.prompt))))
    })
    return Object.assign(model, { prompts })
  })

export const layer = (turns: ReadonlyArray<Turn>): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(LanguageModel.LanguageModel, make(turns))
