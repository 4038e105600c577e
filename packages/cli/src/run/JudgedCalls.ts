import { type JsonObject, jsonEquals } from "@abhed/protocol"

/**
 * The `tool_call`s `abhed-ext run` decided in its session, so that an `invoke_tool` for one of them runs only as it
 * was decided (docs/cli.md, input): never after a deny, and only with the settled args (an extension's rewrite
 * included) on the tool the call named. `run` is the one running an extension's tool, so a deny it has just printed
 * must not be lifted by the next line: an agent that sends the invoke without reading the decision (or with the args
 * it first proposed) would otherwise run what the guards vetoed.
 *
 * Which call an invoke is for: the one its `call_id` names, when the line gives one. When it leaves it out, the
 * latest call of the same tool whose args, as proposed or as settled, are the invoke's (whether or not a result was
 * sent for it since). An invoke no decided call holds runs as before (the agent judged it some other way: a tool of
 * the agent's own, a recording cut short). Pure state over one session: one entry per decided call.
 */
export interface JudgedCalls {
  /** A `tool_call` decided: its id, tool, the args proposed and settled, the decision, and its line. */
  readonly decided: (call: Decided & { readonly callId: string }) => void
  /**
   * Why the `invoke_tool` of `tool` with `args` must not run, or `undefined` when it may. `named`: the `call_id` the
   * line gave itself (undefined when it left it out).
   */
  readonly refusal: (named: string | undefined, tool: string, args: JsonObject) => string | undefined
}

export interface Decided {
  readonly tool: string
  readonly proposed: JsonObject
  readonly settled: JsonObject
  readonly decision: string
  readonly line: number
}

export const make = (): JudgedCalls => {
  const byId = new Map<string, Decided & { readonly callId: string }>()
  /** Per tool, its decided calls, latest last (a call decided again under its id moves to the end). */
  const byTool = new Map<string, Array<Decided & { readonly callId: string }>>()
  const latestWith = (tool: string, args: JsonObject) => {
    const calls = byTool.get(tool) ?? []
    for (let i = calls.length - 1; i >= 0; i--) {
      const call = calls[i]
      if (call !== undefined && (jsonEquals(args, call.settled) || jsonEquals(args, call.proposed))) return call
    }
    return undefined
  }
  return {
    decided: (call) => {
      const before = byId.get(call.callId)
      if (before !== undefined) {
        const calls = byTool.get(before.tool)
        calls?.splice(calls.indexOf(before), 1)
      }
      byId.set(call.callId, call)
      byTool.set(call.tool, [...(byTool.get(call.tool) ?? []), call])
    },
    refusal: (named, tool, args) => {
      const call = named === undefined ? latestWith(tool, args) : byId.get(named)
      if (call === undefined) return undefined
      const id = JSON.stringify(call.callId)
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
