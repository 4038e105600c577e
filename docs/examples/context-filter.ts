/**
 * context-filter: keeps private messages from going upstream to the model.
 *
 *   node context-filter.ts
 *
 * A message is private when it carries `"private": true`, or when its text contains the marker `[private]`
 * (a string `content`, or any `text` part of an array `content`). The reply keeps every other index.
 */
import { Extension } from "@abhed/extension"

export const Marker = "[private]"

const isObject = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const textOf = (content: unknown): ReadonlyArray<string> =>
  typeof content === "string"
    ? [content]
    : Array.isArray(content)
    ? content.flatMap((part) =>
      typeof part === "string" ? [part] : isObject(part) && typeof part["text"] === "string" ? [part["text"]] : []
    )
    : []

export const isPrivate = (message: unknown): boolean =>
  isObject(message) && (message["private"] === true || textOf(message["content"]).some((t) => t.includes(Marker)))

export const keep = (messages: ReadonlyArray<unknown>): ReadonlyArray<number> =>
  messages.flatMap((message, index) => (isPrivate(message) ? [] : [index]))

if (import.meta.main) {
  Extension.main({
    context: (req) => {
      const kept = keep(req.messages)
      // Nothing to drop: no opinion (keeping every index would mean the same, but {} is cheaper to combine).
      return kept.length === req.messages.length ? {} : { keep: kept }
    }
  })
}
