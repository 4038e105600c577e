/**
 * Values filed by their tool and their args' key (ArgsKey.ts), latest last: how `run` finds the call a result
 * (CallIds.ts) or an invoke (JudgedCalls.ts) is for without a walk through every call of the session.
 */
export interface ArgsIndex<A> {
  /** Files `value` under `tool` and `key`, after those filed there before. */
  readonly add: (tool: string, key: string, value: A) => void
  /** Takes the latest filing of `value` under `tool` and `key` out, if there is one. */
  readonly remove: (tool: string, key: string, value: A) => void
  /** What is filed under `tool` and `key`, latest last. */
  readonly get: (tool: string, key: string) => ReadonlyArray<A>
}

export const make = <A>(): ArgsIndex<A> => {
  const byTool = new Map<string, Map<string, Array<A>>>()
  return {
    add: (tool, key, value) => {
      const keys = byTool.get(tool) ?? new Map<string, Array<A>>()
      byTool.set(tool, keys)
      const values = keys.get(key)
      if (values === undefined) keys.set(key, [value])
      else values.push(value)
    },
    remove: (tool, key, value) => {
      const keys = byTool.get(tool)
      const values = keys?.get(key)
      const at = values?.lastIndexOf(value) ?? -1
      if (keys === undefined || values === undefined || at < 0) return
      values.splice(at, 1)
      if (values.length > 0) return
      keys.delete(key)
      if (keys.size === 0) byTool.delete(tool)
    },
    get: (tool, key) => byTool.get(tool)?.get(key) ?? []
  }
}
