import { NameOrder, takesPart } from "@abhed/core"
import type { EventName, Request } from "@abhed/protocol"
import type { AuditExchange } from "./AuditLog.ts"
import { subscribes, type Extension } from "./Extension.ts"

/**
 * Who gets one round of an event (docs/design.md#combination): the subscribers that take part, in name order, and the
 * others as audit entries (`not_subscribed`, or `not_matched` for a subscriber whose `match` rules miss this call).
 */
export interface Audience {
  readonly subscribers: ReadonlyArray<Extension>
  readonly skipped: ReadonlyArray<AuditExchange>
}

/** A round's audience, from the round's own request: a rewrite can change who matches the next round. */
export type RoundAudience = (request: Request) => Audience

const skip = (x: Extension, status: "not_subscribed" | "not_matched"): AuditExchange => ({
  extension: x.name,
  status,
  latency_ms: 0
})

/**
 * Works out once, per event, as much of the audience as does not depend on the payload. With no matcher among
 * the event's subscribers (every event but tool_call and tool_result, and the common case for those two) the
 * audience is that one precomputed value; otherwise each round filters the matchers on the round's tool and args.
 * `extensions` must be in name order.
 */
export const roundAudience = (extensions: ReadonlyArray<Extension>, event: EventName): RoundAudience => {
  const subscribers = extensions.filter((x) => subscribes(x.config, event))
  const notSubscribed = extensions.filter((x) => !subscribes(x.config, event)).map((x) => skip(x, "not_subscribed"))
  const fixed: Audience = { subscribers, skipped: notSubscribed }
  const matched =
    event === "tool_call" || event === "tool_result" ? subscribers.some((x) => x.config.match !== undefined) : false
  if (!matched) return () => fixed
  // Every extension in name order, with the entry it gets when it sits the round out: `skipped` comes out in
  // name order too, so the round's audit entries are a merge, not a sort.
  const all = extensions.map((x) =>
    subscribes(x.config, event)
      ? { extension: x, subscribed: true, skipped: skip(x, "not_matched") }
      : { extension: x, subscribed: false, skipped: skip(x, "not_subscribed") }
  )
  return (request) => {
    if (request.event !== "tool_call" && request.event !== "tool_result") return fixed
    const taking: Array<Extension> = []
    const skipped: Array<AuditExchange> = []
    for (const x of all) {
      if (x.subscribed && takesPart(x.extension.config.match, request)) taking.push(x.extension)
      else skipped.push(x.skipped)
    }
    return { subscribers: taking, skipped }
  }
}

/**
 * A round's audit entries in name order, from the exchanges (in name order: the subscribers are) and the skipped
 * (in name order: `roundAudience` makes them so): merged, not sorted, since this runs on every round.
 */
export const mergeByName = (a: ReadonlyArray<AuditExchange>, b: ReadonlyArray<AuditExchange>): Array<AuditExchange> => {
  if (b.length === 0) return [...a]
  if (a.length === 0) return [...b]
  const out: Array<AuditExchange> = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const x = a[i]
    const y = b[j]
    if (x === undefined || y === undefined) break
    if (NameOrder(x.extension, y.extension) <= 0) {
      out.push(x)
      i++
    } else {
      out.push(y)
      j++
    }
  }
  return out.concat(a.slice(i), b.slice(j))
}
