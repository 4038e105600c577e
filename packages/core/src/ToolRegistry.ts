import type { ListToolsReply, ToolDeclaration } from "@abhed/protocol"
import type { Named } from "./Named.ts"
import { NameOrder, sortByName } from "./Named.ts"

export interface AcceptedTool {
  readonly extension: string
  readonly tool: ToolDeclaration
}

export interface RejectedTool {
  readonly name: string
  /** Every extension that declared the name, sorted, each once. */
  readonly extensions: ReadonlyArray<string>
  /** "builtin" wins when a name is both a built-in and declared twice. */
  readonly reason: "duplicate" | "builtin"
}

export interface ToolsOutcome {
  /** Sorted by tool name. */
  readonly accepted: ReadonlyArray<AcceptedTool>
  /** Sorted by tool name. */
  readonly rejected: ReadonlyArray<RejectedTool>
}

/**
 * `list_tools` (DESIGN §3): the union of the declared tools. A name declared more than once (by two extensions,
 * or twice by one) or equal to a built-in tool is rejected for every declarer: picking a winner would make the
 * outcome depend on load order, and shadowing a built-in would let an extension impersonate it.
 */
export const combineTools = (builtin: ReadonlyArray<string>, replies: ReadonlyArray<Named<ListToolsReply>>): ToolsOutcome => {
  const builtins = new Set(builtin)
  const byTool = new Map<string, Array<AcceptedTool>>()
  for (const { name, value } of sortByName(replies)) {
    for (const tool of value.tools ?? []) {
      const list = byTool.get(tool.name)
      if (list === undefined) byTool.set(tool.name, [{ extension: name, tool }])
      else list.push({ extension: name, tool })
    }
  }
  const accepted: Array<AcceptedTool> = []
  const rejected: Array<RejectedTool> = []
  for (const toolName of [...byTool.keys()].sort(NameOrder)) {
    const declarations = byTool.get(toolName) ?? []
    const first = declarations[0]
    if (first !== undefined && declarations.length === 1 && !builtins.has(toolName)) {
      accepted.push(first)
    } else {
      rejected.push({
        name: toolName,
        extensions: [...new Set(declarations.map((d) => d.extension))].sort(NameOrder),
        reason: builtins.has(toolName) ? "builtin" : "duplicate"
      })
    }
  }
  return { accepted, rejected }
}
