import { isJsonObject, type JsonObject } from "@abhed/protocol"
import { isWithheld } from "./Actors.ts"
import type { ReadRecord } from "./AuditInput.ts"

/**
 * What of a recorded dispatch can be sent again, exactly as it was first sent
 * (docs/audit.md#replaying-under-a-new-config). Pure. A tool call's args are always in its record. A tool result's
 * content and a context's messages are in it only with `--audit-content full`: as they came in (the record's
 * `input`) when an extension acted on them, else the outcome is what came in. A record without `input` from an
 * older host keeps only what came out: its input is known only when nothing shows an act (no rewrite, no is_error
 * raised, no keep, nothing withheld). Anything else is not replayable, with the reason: never guessed.
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

const DigestContent = "the content is recorded as a digest (record with --audit-content full to replay it)"
const DigestMessages = "the messages are recorded as a digest (record with --audit-content full to replay them)"
/** A record that shows a change but holds no input: an older host's, which kept only what came out. */
const NoInput = " and the record holds no input (an audit from an older abhed-ext): what came in is not recorded"

const HostOwn: ReadonlySet<string> = new Set(["session_start", "session_end", "list_tools", "reload"])

const NotSent = "not sent to any extension: "
/** Why the host sent the dispatch to nobody (the agent refused it, or the host could not send it), if it did. */
const notSent = (r: ReadRecord): string | undefined => r.notes.find((n) => n.startsWith(NotSent))?.slice(NotSent.length)

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
      if (r.tool === undefined || r.args === undefined)
        return notReplayable("the record holds no args (the host could not send them)")
      return { _tag: "ToolCall", tool: r.tool, args: r.args, callId: r.call_id }
    }
    case "tool_result": {
      if (refused !== undefined) return notReplayable(`never sent to an extension (${refused}): nothing to re-decide`)
      if (r.tool === undefined || r.args === undefined)
        return notReplayable("the record holds no args (the host could not send them)")
      const { args, tool } = r
      const outcome = r.outcome
      if (!isJsonObject(outcome) || typeof outcome["is_error"] !== "boolean")
        return notReplayable("the record holds no outcome")
      const plan = (content: unknown, isError: unknown): ReplayPlan =>
        typeof content !== "string"
          ? notReplayable(DigestContent)
          : typeof isError !== "boolean"
            ? notReplayable("the record's input holds no is_error")
            : { _tag: "ToolResult", tool, args, content, isError, callId: r.call_id }
      if (r.input !== undefined) {
        return isJsonObject(r.input)
          ? plan(r.input["content"], r.input["is_error"])
          : notReplayable("the record's input is not a tool result's")
      }
      // No input: the outcome is what came in, unless the record shows a change (then it is from an older host).
      const content = outcome["content"]
      if (typeof content !== "string") return notReplayable(DigestContent)
      if (isWithheld({ content, is_error: outcome["is_error"] }))
        return notReplayable(`the content was withheld${NoInput}`)
      if (outcome["rounds"] !== 1 || r.rounds.length > 1) return notReplayable(`the content was rewritten${NoInput}`)
      const raisers = firstRoundWith(r, "is_error", (v) => v === true)
      if (outcome["is_error"] === true && raisers.length > 0)
        return notReplayable(`is_error was raised by ${raisers.join(", ")}${NoInput}`)
      return plan(content, outcome["is_error"])
    }
    case "context": {
      const outcome = r.outcome
      if (refused !== undefined) return notReplayable(`never sent to an extension (${refused}): nothing to re-decide`)
      if (!isJsonObject(outcome)) return notReplayable("the record holds no outcome")
      const plan = (messages: unknown): ReplayPlan =>
        Array.isArray(messages) ? { _tag: "Context", messages } : notReplayable(DigestMessages)
      if (r.input !== undefined) {
        return isJsonObject(r.input)
          ? plan(r.input["messages"])
          : notReplayable("the record's input is not a context's")
      }
      // No input: the outcome is what came in, unless the record shows a change (then it is from an older host).
      const messages = outcome["messages"]
      if (!Array.isArray(messages)) return notReplayable(DigestMessages)
      const withheld = outcome["withheld"]
      if (Array.isArray(withheld) && withheld.length > 0) return notReplayable(`the context was withheld${NoInput}`)
      const droppers = firstRoundWith(r, "keep", (v) => v !== undefined && v !== null)
      if (droppers.length > 0) return notReplayable(`${droppers.join(", ")} sent a keep${NoInput}`)
      return plan(messages)
    }
    default:
      return notReplayable(`replay re-decides tool_call, tool_result and context; ${r.event} is not re-decided`)
  }
}
