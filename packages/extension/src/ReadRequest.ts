import { type EventName, isEventName } from "@abhed/protocol/Event"
import type { Request } from "@abhed/protocol/Request"
import { checkRequest } from "@abhed/protocol/RequestCheck"
import { mismatch, parseLine } from "./RequestLine.ts"
import { decodeBySchema } from "./RequestSchema.ts"
import type { Stop } from "./Serve.ts"

/**
 * One request line as a typed request (`@abhed/extension/ReadRequest`), at once: the protocol's Schema is loaded with
 * this module, for a program that has `effect` loaded anyway (`abhed-ext hook`). `Extension.main` reads the same way,
 * loading the Schema only when a request first reaches a handler.
 */

export type ReadRequest =
  /** A request of an event the reader reads, decoded against its event's schema. */
  | { readonly _tag: "Request"; readonly request: Request; readonly id: unknown }
  /** An event the reader does not read, or one this SDK does not know (a newer host's): answered `{}`, unread. */
  | { readonly _tag: "Skipped"; readonly event: string; readonly id: unknown }
  /** Not a request the extension can read (docs/design.md#unreadable-requests): no reply; serving stops. */
  | Stop

export const readRequest = (line: string, reads: (event: EventName) => boolean): ReadRequest => {
  const parsed = parseLine(line)
  if (parsed._tag === "Stop") return parsed
  const { event, id, request } = parsed
  if (!isEventName(event) || !reads(event)) return { _tag: "Skipped", event, id }
  const checked = checkRequest(event, request)
  if (checked !== undefined) return { _tag: "Request", request: checked, id }
  const decoded = decodeBySchema(event, request)
  return decoded._tag === "Failure"
    ? mismatch(event, decoded.failure)
    : { _tag: "Request", request: decoded.success, id }
}
