import { isToolName, ToolNameRule } from "@abhed/protocol/Tool"
import { printable } from "../Printable.ts"

/**
 * How an MCP server's tool names become ours: `mcp__<server>__<tool>`, the convention Claude Code and the other
 * agents use, so that a guard's matcher (`mcp__github__*`) reads the same everywhere. A character our tool-name rule
 * does not allow (`.`, `/`, a space) becomes `_`; a name still too long, or one that two of the server's tools would
 * share (compared ignoring case, as the host compares), is skipped: the model never sees it, and a warning says why.
 */

/** A server name as a prefix: the same rule as a tool name, so the prefixed name can fit it. */
export const ServerNamePattern = /^[A-Za-z0-9_-]{1,40}$/

export interface NamedTool<T> {
  readonly declared: string
  readonly tool: T
}

export interface ToolNaming<T> {
  readonly tools: ReadonlyArray<NamedTool<T>>
  readonly warnings: ReadonlyArray<string>
}

export const prefixed = (server: string, tool: string): string => `mcp__${server}__${tool}`

/** Our names for the server's tools, in the server's order, and a warning for each one mapped or skipped. */
export const nameTools = <T>(server: string, tools: ReadonlyArray<T>, nameOf: (tool: T) => string): ToolNaming<T> => {
  const named: Array<NamedTool<T>> = []
  const warnings: Array<string> = []
  const taken = new Set<string>()
  for (const tool of tools) {
    const original = nameOf(tool)
    const declared = prefixed(server, original.replace(/[^A-Za-z0-9_-]/g, "_"))
    // The server's text, for a warning on a terminal: JSON leaves C1 controls, bidirectional overrides and invisible
    // characters as they are.
    const shown = printable(JSON.stringify(original))
    if (!isToolName(declared)) {
      warnings.push(
        `tool ${shown} skipped: ${JSON.stringify(declared)} does not fit the tool-name rule (${ToolNameRule})`
      )
      continue
    }
    if (taken.has(declared.toLowerCase())) {
      warnings.push(
        `tool ${shown} skipped: another of the server's tools is already declared as ${JSON.stringify(declared)}`
      )
      continue
    }
    if (!declared.endsWith(`__${original}`)) warnings.push(`tool ${shown} declared as ${JSON.stringify(declared)}`)
    taken.add(declared.toLowerCase())
    named.push({ declared, tool })
  }
  return { tools: named, warnings }
}
