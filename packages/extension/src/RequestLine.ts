import type { JsonObject } from "@abhed/protocol/Json"
import { type Stop, stop } from "./Serve.ts"

/**
 * One request line read as far as it can be without the protocol's Schema (so without loading `effect`): JSON, an
 * object, its `event` and `id`. And the two things every reply shares: the echoed `id`, and the stop for a request
 * the extension cannot read (docs/design.md#unreadable-requests).
 */

/** A request line that is a JSON object naming its event; its payload is not checked yet. */
export interface ParsedLine {
  readonly _tag: "Parsed"
  readonly request: JsonObject
  readonly event: string
  /** The request's `id`, as the JSON value it was (undefined: it has none). */
  readonly id: unknown
}

const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The host writes only requests that are JSON objects naming their event, each matching its event's schema. A line
 * that is not one means the host and the extension disagree about the protocol (a version mismatch, or a bug): the
 * extension cannot tell what it was asked, so it answers nothing and stops, and the host applies its `on_failure`.
 * Said on one line: the host shows an extension's last stderr line as the cause of its death.
 */
export const unreadable = (what: string): Stop =>
  stop(
    `cannot read a request: ${what.replace(/\s*\n\s*/g, "; ")}; the host and this extension disagree about the protocol (a version mismatch, or a bug): no reply, stopping so that the host applies this extension's on_failure`
  )

/** A request of a known event whose fields do not match the event's schema (`problem`, from the Schema). */
export const mismatch = (event: string, problem: string): Stop =>
  unreadable(`${event}: request does not match the protocol: ${problem}`)

export const parseLine = (text: string): ParsedLine | Stop => {
  let request: unknown
  try {
    request = JSON.parse(text)
  } catch (error) {
    return unreadable(`request is not JSON (${error instanceof Error ? error.message : "unparsable"})`)
  }
  if (!isObject(request)) return unreadable("request is not a JSON object")
  const event = request["event"]
  if (typeof event !== "string") return unreadable('request has no "event" string')
  return { _tag: "Parsed", request, event, id: Object.hasOwn(request, "id") ? request["id"] : undefined }
}

/**
 * `reply` (one JSON object, no newline) with the request's `id` echoed as the JSON value it was, when it has one
 * (docs/design.md#wire-protocol). A reply's own `id` field was already dropped by the protocol check.
 */
export const withId = (reply: string, id: unknown): string =>
  id === undefined ? reply : `${reply.slice(0, -1)}${reply === "{}" ? "" : ","}"id":${JSON.stringify(id)}}`
