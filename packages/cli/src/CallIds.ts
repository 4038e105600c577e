import type { InputRequest } from "./InputLine.ts"

/**
 * The `call_id`s of `abhed-ext run`'s input lines that leave it out (docs/cli.md). Pure state over one session.
 *
 * - A `tool_call` without one gets `c-1`, `c-2`, …, skipping every id an input line gave: two calls never share one
 *   (the host's own numbering did not know the given ids, so `c-3` could be given and made).
 * - A `tool_result` without one is the result of the latest `tool_call` of the same tool that has had no result yet,
 *   as a recorded session writes them (call, then its result); an `invoke_tool` without one belongs to that call
 *   too (an extension's tool runs between its call and its result). With no such call, a new id.
 *
 * Memory: one entry per id given or made, and one per tool awaiting its result; a recorded session, not a server.
 */
export interface CallIds {
  /** `request` with its `call_id`, given or assigned; events without one pass through. */
  readonly assign: (request: InputRequest) => InputRequest
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
  const latestAwaiting = (tool: string): string | undefined => awaiting.get(tool)?.at(-1)
  const settle = (tool: string, id: string) => {
    const calls = awaiting.get(tool)
    const at = calls?.lastIndexOf(id) ?? -1
    if (calls === undefined || at < 0) return
    calls.splice(at, 1)
    if (calls.length === 0) awaiting.delete(tool)
  }
  return {
    assign: (request) => {
      switch (request.event) {
        case "tool_call": {
          const id = request.call_id ?? fresh()
          taken.add(id)
          awaiting.set(request.tool, [...(awaiting.get(request.tool) ?? []), id])
          return { ...request, call_id: id }
        }
        case "invoke_tool": {
          const id = request.call_id ?? latestAwaiting(request.tool) ?? fresh()
          taken.add(id)
          return { ...request, call_id: id }
        }
        case "tool_result": {
          const id = request.call_id ?? latestAwaiting(request.tool) ?? fresh()
          taken.add(id)
          settle(request.tool, id)
          return { ...request, call_id: id }
        }
        default:
          return request
      }
    }
  }
}
