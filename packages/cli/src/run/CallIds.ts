import type { JsonObject } from "@abhed/protocol"
import { Result } from "effect"
import type { InputLine, InputRequest } from "../InputLine.ts"
import * as ArgsIndex from "./ArgsIndex.ts"
import { argsKey } from "./ArgsKey.ts"

/**
 * The `call_id`s of `abhed-ext run`'s input lines that leave it out (docs/cli.md). Pure state over one session.
 *
 * - A `tool_call` without one gets `c-1`, `c-2`, …, skipping every id an input line gave: two calls never share one
 *   (the host's own numbering did not know the given ids, so `c-3` could be given and made).
 * - A `tool_result` without one is the result of the latest `tool_call` of the same tool that has had no result yet,
 *   as a recorded session writes them (call, then its result), and among those, when it gives `args`, the latest
 *   whose args (as proposed, or as decided) are its own: two calls of a tool, then their results in another order,
 *   each pair up. With no such call, a new id.
 * - An `invoke_tool` without one gets a new id: the call it is for is found by its args (JudgedCalls.ts), which the
 *   session fills in first; the latest call awaiting a result may be another call of the tool, with other args.
 *
 * A `tool_result` without `args` takes them from the call it pairs with: the args the call ran with once `ran`
 * recorded them (an extension may have rewritten them), else the call's own. With no such call, it is an error.
 *
 * Memory: one entry per id given or made, and one per call awaiting its result (with its args); a recorded
 * session, not a server.
 */
export interface CallIds {
  /** `request` with its `call_id`, given or assigned; events without one pass through. */
  readonly assign: (request: InputRequest) => InputRequest
  /** `assign` for an input line, whose `tool_result` may leave out `args`; or why they cannot be found. */
  readonly complete: (line: InputLine) => Result.Result<InputRequest, string>
  /** The args the call `callId` was decided to run with: what a `tool_result` without `args` gets. */
  readonly ran: (callId: string, args: JsonObject) => void
}

export const make = (): CallIds => {
  const taken = new Set<string>()
  /** Per tool: the calls awaiting their result, newest last. */
  const awaiting = new Map<string, Array<string>>()
  let n = 0
  const fresh = (): string => {
    let id: string
    do id = `c-${(++n).toFixed(0)}`
    while (taken.has(id))
    taken.add(id)
    return id
  }
  /** Per call awaiting its result: the args it runs with (its own, until `ran` says otherwise). */
  const argsOf = new Map<string, JsonObject>()
  /**
   * The awaiting calls by the canonical JSON of their args (proposed, and as decided), per tool: how a result with
   * args finds its call without a walk through every call awaiting one. Per call, its keys.
   */
  const byArgs = ArgsIndex.make<string>()
  const keysOf = new Map<string, { readonly tool: string; readonly keys: Set<string> }>()
  const index = (tool: string, id: string, args: JsonObject) => {
    const key = argsKey(args)
    const own = keysOf.get(id)
    if (key === undefined || own === undefined || own.keys.has(key)) return
    own.keys.add(key)
    byArgs.add(tool, key, id)
  }
  const unindex = (id: string) => {
    const own = keysOf.get(id)
    keysOf.delete(id)
    if (own !== undefined) for (const key of own.keys) byArgs.remove(own.tool, key, id)
  }
  const latestAwaiting = (tool: string): string | undefined => awaiting.get(tool)?.at(-1)
  /** The call a result with `args` is for: the latest awaiting with those args, else the latest awaiting. */
  const pairOf = (tool: string, args: JsonObject): string | undefined => {
    const key = argsKey(args)
    return (key === undefined ? undefined : byArgs.get(tool, key).at(-1)) ?? latestAwaiting(tool)
  }
  const settle = (tool: string, id: string) => {
    argsOf.delete(id)
    unindex(id)
    const calls = awaiting.get(tool)
    const at = calls?.lastIndexOf(id) ?? -1
    if (calls === undefined || at < 0) return
    calls.splice(at, 1)
    if (calls.length === 0) awaiting.delete(tool)
  }
  const assign = (request: InputRequest): InputRequest => {
    switch (request.event) {
      case "tool_call": {
        const id = request.call_id ?? fresh()
        taken.add(id)
        // Pushed, not copied: a run fed calls alone (no results) keeps them all awaiting.
        const calls = awaiting.get(request.tool)
        if (calls === undefined) awaiting.set(request.tool, [id])
        else calls.push(id)
        argsOf.set(id, request.args)
        // A call reusing an awaiting call's id takes its place here.
        unindex(id)
        keysOf.set(id, { tool: request.tool, keys: new Set() })
        index(request.tool, id, request.args)
        return { ...request, call_id: id }
      }
      case "invoke_tool": {
        const id = request.call_id ?? fresh()
        taken.add(id)
        return { ...request, call_id: id }
      }
      case "tool_result": {
        const id = request.call_id ?? pairOf(request.tool, request.args) ?? fresh()
        taken.add(id)
        settle(request.tool, id)
        return { ...request, call_id: id }
      }
      default:
        return request
    }
  }
  return {
    assign,
    complete: (line) => {
      if (line.event !== "tool_result") return Result.succeed(assign(line))
      const { args, ...rest } = line
      if (args !== undefined) return Result.succeed(assign({ ...rest, args }))
      const id = line.call_id ?? latestAwaiting(line.tool)
      const paired = id === undefined ? undefined : argsOf.get(id)
      if (id === undefined || paired === undefined) {
        return Result.fail(
          `tool_result: "args" is missing, and ${
            line.call_id === undefined
              ? `no earlier tool_call of ${JSON.stringify(line.tool)} awaits its result`
              : `no earlier tool_call with call_id ${JSON.stringify(line.call_id)} awaits its result`
          } to take them from: give "args", or the call's "call_id"`
        )
      }
      return Result.succeed(assign({ ...rest, call_id: id, args: paired }))
    },
    ran: (callId, args) => {
      if (!argsOf.has(callId)) return
      argsOf.set(callId, args)
      const own = keysOf.get(callId)
      if (own !== undefined) index(own.tool, callId, args)
    }
  }
}
