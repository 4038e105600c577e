import type { Reason } from "@abhed/core"
import { canonicalJson, type JsonObject } from "@abhed/protocol"
import { Context, Effect, Layer } from "effect"
import { ExtensionHost } from "./ExtensionHost.ts"
import * as IdCounter from "./IdCounter.ts"
import type { ToolCallInput, ToolCallOutcome } from "./Outcome.ts"

/**
 * Who answers an "ask" (docs/design.md#architecture). The host never resolves an ask itself: it is the operator's (or
 * the user's) call. The agent provides an `Approver` — a prompt in an interactive session, `layerDeny` in an unattended
 * one — and turns every decision into run / do not run with `resolve`.
 */
export interface ApprovalRequest {
  readonly tool: string
  /** The settled args: what would run. */
  readonly args: JsonObject
  readonly reasons: ReadonlyArray<Reason>
}

export class Approver extends Context.Service<
  Approver,
  {
    readonly approve: (request: ApprovalRequest) => Effect.Effect<boolean>
  }
>()("@abhed/host/Approver") {
  /** Unattended runs: nobody is there to say yes, so an ask is a no. */
  static readonly layerDeny = Layer.succeed(Approver, Approver.of({ approve: () => Effect.succeed(false) }))
  /** Ask someone: `prompt` shows the call and its reasons and returns the answer. */
  static readonly layer = (prompt: (request: ApprovalRequest) => Effect.Effect<boolean>) =>
    Layer.succeed(Approver, Approver.of({ approve: prompt }))
}

/**
 * Whether the call may run: allow runs, deny does not, ask runs only if the Approver says yes. The outcome is the
 * set's that judged it: for a call still to be judged, `decide` also judges it again after a reload the ask waited out.
 */
export const resolve = (tool: string, outcome: ToolCallOutcome): Effect.Effect<boolean, never, Approver> => {
  switch (outcome.decision) {
    case "allow":
      return Effect.succeed(true)
    case "deny":
      return Effect.succeed(false)
    case "ask":
      return Approver.use((a) => a.approve({ tool, args: outcome.args, reasons: outcome.reasons }))
  }
}

/** Whether the call may run, and the outcome it runs as (its settled args). */
export interface Decided {
  readonly run: boolean
  readonly outcome: ToolCallOutcome
  /** The call's id: the one given, or the one `decide` gave it; pass it to `toolResult` to tie the result to it. */
  readonly call_id: string
}

/** Ids for calls `decide` is given without one (`d-1`, …): one per call, the same at each of its judgments. */
const nextCallId = IdCounter.make("d-")

/**
 * `toolCall`, then `resolve`, for the set in force once the answer is in. An ask may wait minutes for the Approver,
 * and the config may be reloaded meanwhile (a guard added that denies the tool): the outcome was the old set's. If
 * the host's `generation` changed while the Approver was asked, the call is judged again: a deny of the new set
 * stands, an ask with the same settled args and reasons is the one the Approver answered, any other ask is asked
 * again, no opinion runs it with the new settled args. A yes lifts only the ask it was given for.
 */
export const decide = (given: ToolCallInput): Effect.Effect<Decided, never, Approver | ExtensionHost> =>
  Effect.gen(function* () {
    const host = yield* ExtensionHost
    // Named once: a call judged again is the same call in the audit and to the extensions (the host would otherwise
    // make up a new id at each judgment).
    const call_id = given.call_id ?? nextCallId()
    const call = given.call_id === undefined ? { ...given, call_id } : given
    let answered: string | undefined
    while (true) {
      // Read before: a reload that begins during the dispatch counts as one since.
      const generation = yield* host.generation
      const outcome = yield* host.toolCall(call)
      if (outcome.decision !== "ask") return { run: outcome.decision === "allow", outcome, call_id }
      const request: ApprovalRequest = { tool: call.tool, args: outcome.args, reasons: outcome.reasons }
      const asked = canonicalJson(request)
      if (asked !== answered) {
        if (!(yield* Approver.use((a) => a.approve(request)))) return { run: false, outcome, call_id }
        answered = asked
      }
      if ((yield* host.generation) === generation) return { run: true, outcome, call_id }
    }
  })
