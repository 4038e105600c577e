import { type JsonObject, jsonEquals } from "@abhed/protocol"

/**
 * The `tool_call`s `abhed-ext run` decided in its session, by `call_id`, so that an `invoke_tool` for one of them runs
 * only as it was decided (docs/cli.md, input): never after a deny, and only with the settled args (an extension's
 * rewrite included) on the tool the call named. `run` is the one running an extension's tool, so a deny it has just
 * printed must not be lifted by the next line: an agent that sends the invoke without reading the decision (or with
 * the args it first proposed) would otherwise run what the guards vetoed.
 *
 * Which call an invoke is for: the one its `call_id` names, when the line gives one. When the line leaves it out, the
 * id is only paired by tool (CallIds.ts), so the invoke is that call's when its args are the call's (as proposed or
 * as settled); with other args it is another invoke that no decided call holds. Such an invoke runs as before (the
 * agent judged it some other way: a tool of the agent's own, a recording cut short). Pure state over one session: one
 * entry per decided call.
 */
export interface JudgedCalls {
  /** A `tool_call` decided: its id, tool, the args proposed and settled, the decision, and its line. */
  readonly decided: (call: Decided & { readonly callId: string }) => void
  /**
   * Why the `invoke_tool` of `tool` with `args` under `callId` must not run, or `undefined` when it may. `named`: the
   * line gave the id itself (not paired by tool).
   */
  readonly refusal: (callId: string | undefined, named: boolean, tool: string, args: JsonObject) => string | undefined
}

export interface Decided {
  readonly tool: string
  readonly proposed: JsonObject
  readonly settled: JsonObject
  readonly decision: string
  readonly line: number
}

export const make = (): JudgedCalls => {
  const calls = new Map<string, Decided>()
  return {
    decided: ({ callId, ...call }) => {
      calls.set(callId, call)
    },
    refusal: (callId, named, tool, args) => {
      const call = callId === undefined ? undefined : calls.get(callId)
      if (call === undefined) return undefined
      if (!named && !jsonEquals(args, call.proposed) && !jsonEquals(args, call.settled)) return undefined
      const id = JSON.stringify(callId)
      if (call.decision === "deny")
        return `invoke_tool: the tool_call ${id} (line ${call.line}) was denied: a denied call never runs`
      if (call.tool !== tool)
        return (
          `invoke_tool: call_id ${id} is the tool_call of ${JSON.stringify(call.tool)} (line ${call.line}), ` +
          `not of ${JSON.stringify(tool)}: nothing ran`
        )
      if (!jsonEquals(call.settled, args))
        return (
          `invoke_tool: the args are not those the tool_call ${id} (line ${call.line}) was decided to run with: ` +
          `send its output's "args" (an extension may have rewritten them); nothing ran`
        )
      return undefined
    }
  }
}
