import { isJsonObject, type JsonObject } from "@abhed/protocol"
import { isWithheld } from "./Actors.ts"
import type { ReadRecord } from "./AuditInput.ts"

/**
 * What of a recorded dispatch can be sent again, exactly as it was first sent
 * (docs/audit.md#replaying-under-a-new-config). Pure. A tool call's args are always in its record. A tool result's
 * content and a context's messages are in it only with `--audit-content full`, and even then the record keeps what came
 * out, not what went in: the input is known only when nothing changed it (no rewrite, nothing dropped, nothing
 * withheld). Anything else is not replayable, with the reason: never guessed.
 */
export type ReplayPlan =
  | { readonly _tag: "ToolCall"; readonly tool: string; readonly args: JsonObject; readonly callId: string | undefined }
  | {
    readonly _tag: "ToolResult"
    readonly tool: string
    readonly args: JsonObject
    readonly content: string
    readonly isError: boolean
    readonly callId: string | undefined
  }
  | { readonly _tag: "Context"; readonly messages: ReadonlyArray<unknown> }
  /** Dispatches the replay host makes itself (session_start, list_tools, session_end): nothing to compare. */
  | { readonly _tag: "HostOwn" }
  | { readonly _tag: "NotReplayable"; readonly reason: string }

const notReplayable = (reason: string): ReplayPlan => ({ _tag: "NotReplayable", reason })

const HostOwn: ReadonlySet<string> = new Set(["session_start", "session_end", "list_tools", "reload"])

const NotSent = "not sent to any extension: "
/** Why the host sent the dispatch to nobody (the agent refused it, or the host could not send it), if it did. */
const notSent = (r: ReadRecord): string | undefined =>
  r.notes.find((n) => n.startsWith(NotSent))?.slice(NotSent.length)

const replyField = (reply: unknown, field: string): unknown => (isJsonObject(reply) ? reply[field] : undefined)

/** Names of the first round's exchanges whose reply has `field` set as `test` says. */
const firstRoundWith = (r: ReadRecord, field: string, test: (v: unknown) => boolean): ReadonlyArray<string> =>
  (r.rounds[0]?.exchanges ?? []).filter((x) => test(replyField(x.reply, field))).map((x) => x.extension)

export const planOf = (r: ReadRecord): ReplayPlan => {
  if (HostOwn.has(r.event)) return { _tag: "HostOwn" }
  const refused = notSent(r)
  switch (r.event) {
    case "tool_call": {
      if (refused !== undefined) return notReplayable(`never sent to an extension (${refused}): nothing to re-decide`)
      if (r.tool === undefined || r.args === undefined) return notReplayable("the record holds no args (the host could not send them)")
      return { _tag: "ToolCall", tool: r.tool, args: r.args, callId: r.call_id }
    }
    case "tool_result": {
      if (refused !== undefined) return notReplayable(`never sent to an extension (${refused}): nothing to re-decide`)
      if (r.tool === undefined || r.args === undefined) return notReplayable("the record holds no args (the host could not send them)")
      const outcome = r.outcome
      if (!isJsonObject(outcome) || typeof outcome["is_error"] !== "boolean") return notReplayable("the record holds no outcome")
      const content = outcome["content"]
      if (typeof content !== "string") {
        return notReplayable("the content is recorded as a digest (record with --audit-content full to replay it)")
      }
      if (isWithheld({ content, is_error: outcome["is_error"] })) return notReplayable("the content was withheld: what the tool returned is not recorded")
      if (outcome["rounds"] !== 1 || r.rounds.length > 1) {
        return notReplayable("the content was rewritten before it was recorded: what the tool returned is not recorded")
      }
      // is_error is recorded as it came out: raised by an extension, the tool's own is not known.
      const raisers = firstRoundWith(r, "is_error", (v) => v === true)
      if (outcome["is_error"] === true && raisers.length > 0) {
        return notReplayable(`is_error was raised by ${raisers.join(", ")}: the tool's own is not recorded`)
      }
      return { _tag: "ToolResult", tool: r.tool, args: r.args, content, isError: outcome["is_error"], callId: r.call_id }
    }
    case "context": {
      const outcome = r.outcome
      if (!isJsonObject(outcome)) return notReplayable("the record holds no outcome")
      const messages = outcome["messages"]
      if (!Array.isArray(messages)) {
        return notReplayable("the messages are recorded as a digest (record with --audit-content full to replay them)")
      }
      const withheld = outcome["withheld"]
      if (refused !== undefined || (Array.isArray(withheld) && withheld.length > 0)) {
        return notReplayable("the context was withheld: its messages are not recorded")
      }
      // The record keeps the kept messages: with a keep sent, the dropped ones (and how many there were) are gone.
      const droppers = firstRoundWith(r, "keep", (v) => v !== undefined && v !== null)
      if (droppers.length > 0) {
        return notReplayable(`${droppers.join(", ")} sent a keep: the messages it dropped are not recorded`)
      }
      return { _tag: "Context", messages }
    }
    default:
      return notReplayable(`replay re-decides tool_call, tool_result and context; ${r.event} is not re-decided`)
  }
}
