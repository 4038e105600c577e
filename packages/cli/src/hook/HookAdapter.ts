import { readRequest } from "@abhed/extension/ReadRequest"
import { withId } from "@abhed/extension/RequestLine"
import { UnreadableRequest } from "@abhed/extension/UnreadableRequest"
import { canonicalJson } from "@abhed/protocol/Json"
import { Duration, Effect } from "effect"
import { type HookFormat, peerEvent } from "./HookFormat.ts"
import { peerInput, toolPart } from "./HookInput.ts"
import { type Matcher, matches } from "./HookMatcher.ts"
import { mapRun } from "./HookOutcome.ts"
import type { HookRun } from "./HookRunner.ts"
import type { ObservedRun } from "./HookTelemetry.ts"
import type { ToolNames } from "./HookToolNames.ts"

/**
 * The long-lived side of `abhed-ext hook`: one request line in, one reply line out. The line is read by the SDK
 * (`readRequest`: typed, checked against the protocol); a line it cannot read fails with `UnreadableRequest`, and
 * the adapter stops without a reply (docs/design.md#unreadable-requests: a guard must not pass what it could not
 * read). Per request it decides whether the hook runs at all (the peer has the event; `--matcher` matches the tool),
 * runs it once through `run`, and maps what came of it (HookOutcome.ts). Every reply echoes the request's `id` when
 * it has one.
 *
 * Settling rounds: the host may send a call again (`round` 2, 3, …) after a rewrite. When what comes back is this
 * hook's own proposal, the peer would never have run the hook on it (it runs a hook once per call), so the same
 * reply is given again without a run: the rewrite settles, and no spawn is spent on it.
 */

export interface AdapterOptions {
  readonly format: HookFormat
  readonly matcher: Matcher
  readonly names: ToolNames
  readonly failClosed: boolean
  /** The hook's command line, for log lines. */
  readonly label: string
  readonly cwd: string
  readonly now: () => string
  /** Told of each run once its answer is made (HookTelemetry.ts): must not wait. */
  readonly observe?: ((run: ObservedRun) => void) | undefined
}

export interface Answer {
  /** The reply line (JSON, no newline). */
  readonly line: string
  /** Lines for our stderr. */
  readonly log: ReadonlyArray<string>
  /** Whether the hook was run for this request. */
  readonly ran: boolean
}

/** How many calls' own proposals are remembered (the rounds of one call come back to back). */
const RememberedProposals = 64

/** How a run ended, for the per-run log line. */
const endOf = (run: HookRun): string => {
  switch (run._tag) {
    case "Exited":
      return `exit ${run.code}${run.stdoutCut === true ? " (stdout cut)" : ""}`
    case "Signaled":
      return `killed by ${run.signal}`
    case "TimedOut":
      return `timed out after ${run.timeoutMs} ms`
    case "SpawnFailed":
      return `could not start (${run.detail})`
  }
}

/** What a reply became, for the per-run log line: never the args or content themselves (they may hold secrets). */
const becameOf = (reply: Record<string, unknown>): string => {
  if (reply["failed"] !== undefined) return "failed"
  const parts: Array<string> = []
  if (reply["block"] === true) parts.push("block")
  if (reply["ask"] === true) parts.push("ask")
  if (reply["args"] !== undefined) parts.push("an args rewrite")
  if (reply["content"] !== undefined) parts.push("a content rewrite")
  if (reply["is_error"] === true) parts.push("is_error")
  return parts.length === 0 ? "no opinion" : parts.join(", ")
}

export const makeAdapter = (options: AdapterOptions, run: (input: string) => Effect.Effect<HookRun>) => {
  const proposals = new Map<string, { readonly payload: string; readonly reply: Record<string, unknown> }>()
  const remember = (key: string, payload: unknown, reply: Record<string, unknown>) => {
    proposals.delete(key)
    proposals.set(key, { payload: canonicalJson(payload), reply })
    if (proposals.size > RememberedProposals) {
      const oldest = proposals.keys().next()
      if (oldest.done !== true) proposals.delete(oldest.value)
    }
  }

  const reply = (id: unknown, body: Record<string, unknown>): string => withId(JSON.stringify(body), id)
  // The events the peer has: the others are answered {} unread, as the SDK answers an event without a handler.
  const reads = (event: string) => peerEvent(options.format, event) !== undefined

  const answer = (line: string): Effect.Effect<Answer, UnreadableRequest> =>
    Effect.suspend((): Effect.Effect<Answer, UnreadableRequest> => {
      const read = readRequest(line, reads)
      if (read._tag === "Stop") return Effect.fail(new UnreadableRequest({ reason: read.reason }))
      if (read._tag === "Skipped") {
        return Effect.succeed({
          line: reply(read.id, {}),
          log: [`${read.event}: no ${options.format} event for it; not run; {}`],
          ran: false
        })
      }
      const { id, request } = read
      const event = request.event
      // The matcher first: a call it does not match costs no peer input.
      const tool = toolPart(request, options.names)
      const what = tool === undefined ? event : `${event} ${tool.peerTool}`
      if (tool !== undefined && !matches(options.matcher, tool.peerTool)) {
        return Effect.succeed({
          line: reply(id, {}),
          log: [`${what}: not matched by --matcher; not run; {}`],
          ran: false
        })
      }
      const input = peerInput(
        options.format,
        request,
        { cwd: options.cwd, now: options.now(), names: options.names },
        tool
      )
      if (input === undefined) {
        return Effect.succeed({
          line: reply(id, {}),
          log: [`${what}: no ${options.format} event for it; not run; {}`],
          ran: false
        })
      }
      // The call's tool is part of the key: an agent may give two calls one id (ids numbered per turn).
      const key = tool === undefined ? undefined : `${event}\u0000${tool.callId}\u0000${tool.tool}`
      const payload = tool === undefined ? undefined : event === "tool_call" ? tool.args : tool.content
      const round = request.event === "tool_call" || request.event === "tool_result" ? request.round : undefined
      if (key !== undefined && round !== undefined && round >= 2) {
        const own = proposals.get(key)
        if (own !== undefined && own.payload === canonicalJson(payload)) {
          return Effect.succeed({
            line: reply(id, own.reply),
            log: [`${what}: round ${round} holds the hook's own rewrite; not run again; ${becameOf(own.reply)}`],
            ran: false
          })
        }
      }
      // One line, newline-terminated: a hook may `read -r line` as well as parse all of stdin.
      return Effect.map(Effect.timed(run(`${JSON.stringify(input)}\n`)), ([took, result]) => {
        const mapped = mapRun(event, tool, result, {
          format: options.format,
          failClosed: options.failClosed,
          label: options.label
        })
        const proposal = mapped.reply["args"] ?? mapped.reply["content"]
        // Only this run's proposal counts: a run that proposes nothing forgets an earlier call's of the same id, which
        // a later round must not find and answer for a call the hook never saw.
        if (key !== undefined) {
          if (proposal !== undefined) remember(key, proposal, mapped.reply)
          else proposals.delete(key)
        }
        options.observe?.({ request, event, tool, result, reply: mapped.reply, took })
        const ran = `${what}: ran: ${endOf(result)} in ${Math.round(Duration.toMillis(took))} ms; ${becameOf(mapped.reply)}`
        return { line: reply(id, mapped.reply), log: [ran, ...mapped.log], ran: true }
      })
    })

  return { answer }
}
