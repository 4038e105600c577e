import {
  ask,
  combineCompact,
  combineIsError,
  combineKeep,
  combineSystem,
  decide,
  deny,
  fromToolCallReply,
  type Reason,
  type Verdict,
  VerdictReducer
} from "@abhed/core"
import { isToolName } from "@abhed/protocol"
import type {
  BeforeAgentStartReply,
  BeforeCompactReply,
  ContextReply,
  EventName,
  JsonObject,
  PolicyLevel,
  ToolCallReply,
  ToolResultReply
} from "@abhed/protocol"

/**
 * The reference model of the host (issue 25): what the host must decide for a config and a misbehaviour schedule,
 * written from the rules (docs/semantics.md, docs/failures.md, docs/protocol.md), never from the host's code. The
 * combination of replies is core's reducers (they are the rules); death, timeouts and `on_failure` are modelled here:
 *
 * - one failure, dead for good: from the failing request on, the extension is never asked again;
 * - a dead extension's contribution is its `on_failure`: `ignore` nothing; `ask`/`deny` an ask/deny on `tool_call`,
 *   withheld content on `tool_result`, no message kept on `context` (`ask` acts as `deny` there); other events skip it;
 * - a reply that is malformed, unsolicited, too long, late, or never whole counts as no opinion (the extension dies).
 *
 * Outcomes are normalized: a reason or a withheld content that comes from a dead extension is written
 * `unavailable` (its text carries the cause, which the audit checks by shape), not compared verbatim.
 */

export type OnFailure = "ignore" | "ask" | "deny"
export type ReplyIds = "optional" | "required"

/** The misbehaviours of test/fixtures/faults/ext-fault.sh. */
export const Faults = [
  "crash-start",
  "crash-request",
  "crash-mid-reply",
  "hang",
  "slow",
  "garbage",
  "wrong-type",
  "non-object",
  "double-reply",
  "stray-line",
  "banner",
  "foreign-id",
  "missing-id",
  "oversized",
  "drip",
  "invalid-utf8",
  "deep-json",
  "close-stdin",
  "close-stdout",
  "fork-child",
  "setsid-helper",
  "ignore-sigterm",
  "stderr-flood",
  "blank-few",
  "blank-flood",
  "quoting-content"
] as const
export type Fault = (typeof Faults)[number] | "none"

/** The cause tags a death may carry (status and audit). */
export type CauseTag =
  | "exited"
  | "timed_out"
  | "malformed_reply"
  | "unsolicited_output"
  | "reply_too_long"
  | "spawn_failed"

/** Every event a session sees, in the order the matrix sends them (list_tools and session_start at start-up). */
export const Sequence: ReadonlyArray<EventName> = [
  "session_start",
  "list_tools",
  "tool_call",
  "tool_result",
  "context",
  "before_agent_start",
  "before_compact",
  "invoke_tool",
  "session_end"
]

/** Where a fault kills its extension: at start-up, at the trigger, at the request after it, or never. */
type Death =
  | { readonly _tag: "never" }
  | { readonly _tag: "start"; readonly causes: ReadonlyArray<CauseTag> }
  | { readonly _tag: "at"; readonly causes: ReadonlyArray<CauseTag> }
  | { readonly _tag: "after"; readonly causes: ReadonlyArray<CauseTag> }

/** Events whose replies have no field of their own: a wrongly typed field there is another event's, and ignored. */
const noFields = (event: EventName) => event === "session_start" || event === "session_end"

/** The rules for each misbehaviour (docs/failures.md "Causes", docs/protocol.md "Wire format"). */
export const deathOf = (fault: Fault, at: EventName, replyIds: ReplyIds): Death => {
  switch (fault) {
    case "none":
    case "drip": // a reply written a byte at a time is one reply
    case "stderr-flood": // stderr is drained, never a reply
    case "blank-few": // up to 1000 blank lines are skipped
      return { _tag: "never" }
    case "crash-start":
      return { _tag: "start", causes: ["exited"] }
    case "banner":
      // Read before session_start is written (unsolicited), or with it in flight: then it is session_start's reply
      // and the real one comes unasked, or (reply_ids required) it has no id.
      return {
        _tag: "start",
        causes: replyIds === "required" ? ["unsolicited_output", "malformed_reply"] : ["unsolicited_output"]
      }
    case "crash-request":
    case "crash-mid-reply": // a half-written last line is not a reply
    case "fork-child": // detected from the exit, not from the end of stdout (a child holds it)
    case "setsid-helper":
      return { _tag: "at", causes: ["exited"] }
    case "hang":
    case "ignore-sigterm": // hangs, then needs SIGKILL
    case "slow":
    case "close-stdout": // alive, but no reply will ever come
      return { _tag: "at", causes: ["timed_out"] }
    case "garbage":
    case "non-object":
    case "invalid-utf8":
    case "deep-json":
      return { _tag: "at", causes: ["malformed_reply"] }
    case "wrong-type":
    case "quoting-content":
      return noFields(at) ? { _tag: "never" } : { _tag: "at", causes: ["malformed_reply"] }
    case "double-reply":
    case "stray-line":
    case "foreign-id":
    case "blank-flood": // more than 1000 blank lines between two requests
      return { _tag: "at", causes: ["unsolicited_output"] }
    case "missing-id":
      return replyIds === "required" ? { _tag: "at", causes: ["malformed_reply"] } : { _tag: "never" }
    case "oversized":
      return { _tag: "at", causes: ["reply_too_long"] }
    case "close-stdin":
      // It answered; the next request can never be read by it (a write to a closed pipe, or no reply).
      return { _tag: "after", causes: ["timed_out", "exited"] }
  }
}

/** The faults whose rule is only waited out: their cells get a short `timeout_ms`. */
export const needsShortTimeout = (fault: Fault): boolean =>
  fault === "hang" ||
  fault === "slow" ||
  fault === "close-stdout" ||
  fault === "close-stdin" ||
  fault === "ignore-sigterm"

export interface ModelExtension {
  readonly name: string
  readonly on_failure: OnFailure
  readonly reply_ids: ReplyIds
  /** Subscribed events; empty = all. (invoke_tool goes to a tool's owner whatever this says.) */
  readonly events: ReadonlyArray<EventName>
  /** Its reply to each event when healthy (what ext-fault.sh answers). */
  readonly replies: { readonly [E in EventName]: JsonObject }
  readonly fault: Fault
  readonly at: EventName
}

export const healthyReplies = (
  name: string,
  overrides?: Partial<Record<EventName, JsonObject>>
): ModelExtension["replies"] => ({
  session_start: {},
  session_end: {},
  list_tools: { tools: [{ name: `tool_${name}`, description: "d", input_schema: { type: "object" } }] },
  tool_call: { ask: true, reason: `${name} asks` },
  tool_result: { is_error: true },
  context: { keep: [0, 2] },
  before_agent_start: { system: name.toUpperCase() },
  before_compact: { summary: `summary by ${name}` },
  invoke_tool: { result: `result of ${name}` },
  ...overrides
})

/** One step of a session: an event as the agent calls it. */
export type Step =
  | { readonly event: "tool_call"; readonly tool: string; readonly args: JsonObject }
  | { readonly event: "tool_result"; readonly content: string; readonly is_error: boolean }
  | { readonly event: "context"; readonly messages: ReadonlyArray<unknown> }
  | { readonly event: "before_agent_start"; readonly system: string }
  | { readonly event: "before_compact"; readonly messages: ReadonlyArray<unknown> }
  | { readonly event: "invoke_tool"; readonly tool: string }

/** The normalized outcome of one step (what the matrix compares). */
export type Outcome =
  | {
      readonly event: "tool_call"
      readonly decision: string
      readonly reasons: ReadonlyArray<Reason>
      readonly args: unknown
      readonly rounds: number
    }
  | { readonly event: "tool_result"; readonly content: string; readonly is_error: boolean }
  | { readonly event: "context"; readonly keep: ReadonlyArray<number>; readonly withheld: ReadonlyArray<string> }
  | { readonly event: "before_agent_start"; readonly system: string }
  | { readonly event: "before_compact"; readonly cancel: boolean; readonly summary: string | null }
  | { readonly event: "invoke_tool"; readonly result?: unknown; readonly is_error?: boolean; readonly error?: string }

export interface ModelRun {
  readonly outcomes: ReadonlyArray<Outcome>
  /**
   * Each extension's death, or undefined (alive at the end): the causes it may carry and the events where the audit
   * may first name it (empty: no dispatch met the extension after it died, so no record names it).
   */
  readonly deaths: {
    readonly [name: string]:
      | { readonly events: ReadonlyArray<EventName>; readonly causes: ReadonlyArray<CauseTag> }
      | undefined
  }
}

export const Unavailable = "unavailable"

const subscribed = (x: ModelExtension, event: EventName) => x.events.length === 0 || x.events.includes(event)

/**
 * Runs the session: start-up (session_start, list_tools), the steps in order, then session_end. `policy` is the
 * config's default (no rules): the final decision is join(policy, verdict).
 */
export const runModel = (
  extensions: ReadonlyArray<ModelExtension>,
  steps: ReadonlyArray<Step>,
  policy: PolicyLevel = "allow"
): ModelRun => {
  const dead = new Map<string, { events: Array<EventName>; causes: ReadonlyArray<CauseTag> }>()
  /**
   * A death at start-up is seen by the first dispatch that meets the extension, whichever it is; a banner by the
   * second when it was read as the first request's reply (the real reply then comes unasked).
   */
  const startDeaths = new Map<string, number>()
  const fired = new Set<string>()
  /** Pending "after" deaths: the next request kills. */
  const doomed = new Map<string, ReadonlyArray<CauseTag>>()
  for (const x of extensions) {
    const d = deathOf(x.fault, x.at, x.reply_ids)
    if (d._tag === "start") {
      dead.set(x.name, { events: [], causes: d.causes })
      startDeaths.set(x.name, x.fault === "banner" ? 2 : 1)
    }
  }

  /** Sends one event to `audience`: the live replies, and the dead (before or by this request). */
  const send = (event: EventName, audience: ReadonlyArray<ModelExtension>) => {
    const live: Array<{ readonly name: string; readonly value: JsonObject }> = []
    const failed: Array<ModelExtension> = []
    for (const x of audience) {
      const death = dead.get(x.name)
      if (death !== undefined) {
        const seenBy = startDeaths.get(x.name) ?? 0
        if (death.events.length < seenBy) death.events.push(event)
        failed.push(x)
        continue
      }
      const after = doomed.get(x.name)
      if (after !== undefined) {
        dead.set(x.name, { events: [event], causes: after })
        failed.push(x)
        continue
      }
      if (!fired.has(x.name) && x.at === event && x.fault !== "none") {
        fired.add(x.name)
        const d = deathOf(x.fault, event, x.reply_ids)
        if (d._tag === "at") {
          dead.set(x.name, { events: [event], causes: d.causes })
          failed.push(x)
          continue
        }
        if (d._tag === "after") doomed.set(x.name, d.causes)
      }
      live.push({ name: x.name, value: x.replies[event] })
    }
    return { live, failed }
  }
  const audienceOf = (event: EventName) => extensions.filter((x) => subscribed(x, event))
  const strict = (failed: ReadonlyArray<ModelExtension>) => failed.filter((x) => x.on_failure !== "ignore")

  send("session_start", audienceOf("session_start"))
  const startTools = send("list_tools", audienceOf("list_tools"))
  const owners = new Map<string, ModelExtension>()
  for (const r of startTools.live) {
    const tools = (r.value["tools"] ?? []) as ReadonlyArray<{ readonly name: string }>
    const owner = extensions.find((x) => x.name === r.name)
    // A declared name outside the tool-name rule (a `.` in it) is rejected alone; the extension stays alive.
    for (const t of tools) if (owner !== undefined && isToolName(t.name)) owners.set(t.name, owner)
  }

  const outcomes: Array<Outcome> = []
  for (const step of steps) {
    switch (step.event) {
      case "tool_call": {
        const { failed, live } = send("tool_call", audienceOf("tool_call"))
        const verdicts: Array<Verdict> = live.map((r) => fromToolCallReply(r.name, r.value as ToolCallReply))
        for (const x of strict(failed))
          verdicts.push(x.on_failure === "deny" ? deny(x.name, Unavailable) : ask(x.name, Unavailable))
        const verdict = VerdictReducer.combineAll(verdicts)
        const d = decide({ level: policy, source: "default", reason: undefined }, verdict)
        outcomes.push({ event: "tool_call", decision: d.decision, reasons: d.reasons, args: step.args, rounds: 1 })
        break
      }
      case "tool_result": {
        const { failed, live } = send("tool_result", audienceOf("tool_result"))
        outcomes.push(
          strict(failed).length > 0
            ? { event: "tool_result", content: Unavailable, is_error: true }
            : {
                event: "tool_result",
                content: step.content,
                is_error: combineIsError(
                  step.is_error,
                  live.map((r) => ({ name: r.name, value: r.value as ToolResultReply }))
                )
              }
        )
        break
      }
      case "context": {
        const { failed, live } = send("context", audienceOf("context"))
        const withheld = strict(failed)
          .map((x) => x.name)
          .sort()
        outcomes.push(
          withheld.length > 0
            ? { event: "context", keep: [], withheld }
            : {
                event: "context",
                keep: combineKeep(
                  step.messages.length,
                  live.map((r) => ({ name: r.name, value: r.value as ContextReply }))
                ).keep,
                withheld: []
              }
        )
        break
      }
      case "before_agent_start": {
        const { live } = send("before_agent_start", audienceOf("before_agent_start"))
        outcomes.push({
          event: "before_agent_start",
          system: combineSystem(
            step.system,
            live.map((r) => ({ name: r.name, value: r.value as BeforeAgentStartReply }))
          )
        })
        break
      }
      case "before_compact": {
        const { live } = send("before_compact", audienceOf("before_compact"))
        const c = combineCompact(live.map((r) => ({ name: r.name, value: r.value as BeforeCompactReply })))
        outcomes.push({ event: "before_compact", cancel: c.cancel, summary: c.summary })
        break
      }
      case "invoke_tool": {
        const owner = owners.get(step.tool)
        if (owner === undefined) {
          outcomes.push({ event: "invoke_tool", error: "UnknownTool" })
          break
        }
        const { live } = send("invoke_tool", [owner])
        const reply = live[0]?.value
        outcomes.push(
          reply === undefined
            ? { event: "invoke_tool", error: "ToolOwnerUnavailable" }
            : { event: "invoke_tool", result: reply["result"] ?? null, is_error: reply["is_error"] === true }
        )
        break
      }
    }
  }
  send("session_end", audienceOf("session_end"))
  return { outcomes, deaths: Object.fromEntries(extensions.map((x) => [x.name, dead.get(x.name)])) }
}

/** The host's outcome of a step, normalized as the model writes it. */
export const normalizeReason = (r: Reason): Reason =>
  r.reason.startsWith(`extension ${r.extension} unavailable: `) ? { extension: r.extension, reason: Unavailable } : r

export const normalizeContent = (content: string): string =>
  content.startsWith("[withheld: extension ") ? Unavailable : content

/** Rank of strictness, for "never looser than the model": allow < ask < deny. */
export const decisionRank = (decision: string): number => (decision === "deny" ? 2 : decision === "ask" ? 1 : 0)
