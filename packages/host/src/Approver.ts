import type { Reason } from "@abhed/core"
import type { JsonObject } from "@abhed/protocol"
import { Context, Effect, Layer } from "effect"
import type { ToolCallOutcome } from "./Outcome.ts"

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

/** Whether the call may run: allow runs, deny does not, ask runs only if the Approver says yes. */
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
