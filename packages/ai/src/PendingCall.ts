import type { Approval, ExtensionHostShape, ToolCallOutcome } from "@abhed/host"
import { canonicalJson } from "@abhed/protocol"
import { Effect, Result } from "effect"
import type { Tool } from "effect/ai"
import { validateArgs } from "./NormalArgs.ts"
import { box, unbox } from "./ToolArgs.ts"

/**
 * A call the guarded toolkit judged in `needsApproval`, kept by tool call id until `handle` takes it (GuardedToolkit
 * step 2), and what keeps it the judgment of the set in force. An ask may wait minutes for the operator, and the
 * config may be reloaded meanwhile (a guard added that denies the tool, a guard's script changed): the outcome was
 * the old set's. So it notes the host's `generation` read before its `tool_call`, and once that changed the call is
 * judged again, as it would be if the model called it now, before it runs: a deny of the new set stands; an ask, or
 * a tool's own needsApproval, with the same settled args and reasons is the ask the operator answered; any other
 * ask asks again. An approval lifts only the ask it was given for, never a veto of the set in force.
 */
export interface Pending {
  readonly tool: string
  /** The tool as given to the guard (its own `needsApproval`, not the guard's). */
  readonly spec: Tool.Any
  /** The args sent (encoded, in their JSON form), and as canonical JSON, to match the call `handle` is given. */
  readonly args: unknown
  readonly params: string
  /** What effect/ai handed `needsApproval`: the tool's own one is asked again with them. */
  readonly decoded: unknown
  readonly context: Tool.NeedsApprovalContext
  readonly outcome: ToolCallOutcome
  /** The host's `generation` read before the `tool_call`: a reload since may have begun before it. */
  readonly generation: number
  readonly approvalRequested: boolean
  /** The Approver said yes (`resolveApprovals`): only then does a requested approval let the call run. */
  readonly approved: boolean
}

const ownApproval = (tool: Tool.Any, params: unknown, context: Tool.NeedsApprovalContext): Effect.Effect<boolean> => {
  const own = tool.needsApproval
  if (own === undefined || typeof own === "boolean") return Effect.succeed(own === true)
  const answer = own(params, context)
  return typeof answer === "boolean" ? Effect.succeed(answer) : answer
}

/** `tool_call` for `args` over the set in force, and whether an approval is to be requested. */
export const judge = (
  host: ExtensionHostShape,
  spec: Tool.Any,
  args: unknown,
  decoded: unknown,
  context: Tool.NeedsApprovalContext
): Effect.Effect<Pending> =>
  Effect.gen(function* () {
    // Read before: a reload that swaps the set after this read and before the dispatch makes the outcome look
    // older than it is, so it is judged once more; never the other way round.
    const generation = yield* host.generation
    const { args: sent, boxed } = box(args)
    const outcome = yield* host.toolCall({ tool: spec.name, args: sent, call_id: context.toolCallId })
    // Nobody is asked about args that cannot run: `handle` refuses them, naming who rewrote them.
    const runnable = Result.isSuccess(validateArgs(spec, unbox(outcome.args, boxed)))
    const approvalRequested =
      runnable &&
      (outcome.decision === "ask" || (outcome.decision === "allow" && (yield* ownApproval(spec, decoded, context))))
    return {
      tool: spec.name,
      spec,
      args,
      params: canonicalJson(args),
      decoded,
      context,
      outcome,
      generation,
      approvalRequested,
      approved: false
    }
  })

/** What the Approver is shown: the tool, the SETTLED args, the reasons. */
export const requestOf = (entry: Pending): Approval.ApprovalRequest => ({
  tool: entry.tool,
  args: entry.outcome.args,
  reasons: entry.outcome.reasons
})

const sameRequest = (a: Pending, b: Pending): boolean => canonicalJson(requestOf(a)) === canonicalJson(requestOf(b))

/**
 * `entry` as the set in force judges it: itself while the host's generation is unchanged (one compare: the common
 * case costs nothing more), else judged again, keeping an approval only for the same request.
 */
export const inForce = (host: ExtensionHostShape, entry: Pending): Effect.Effect<Pending> =>
  Effect.flatMap(host.generation, (now) =>
    now === entry.generation
      ? Effect.succeed(entry)
      : Effect.map(judge(host, entry.spec, entry.args, entry.decoded, entry.context), (fresh) =>
          entry.approved && fresh.approvalRequested && sameRequest(entry, fresh) ? { ...fresh, approved: true } : fresh
        )
  )
