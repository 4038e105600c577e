import { ExtensionNamePattern, isReservedExtensionName } from "@abhed/protocol"

/** The adapter's `--name`: letters, digits, `_` and `-`, at most this long (so that its tools' names fit). */
export const MaxServerName = 40

export interface Names {
  readonly taken: Set<string>
  /** Server names already made only of letters, digits, `_` and `-` (lower case): kept for their own server. */
  readonly verbatim: ReadonlySet<string>
}

/**
 * The adapter's `--name` (its tools are `mcp__NAME__TOOL`) and the extension's name. `--name` is the server's name
 * with every character outside letters, digits, `_` and `-` made `_`, as Claude Code names the tools (so a guard
 * written for Claude's `mcp__my_server__…` still matches). The extension's name is the same when it is a valid one,
 * else `mcp-` before it. Both unique, ignoring case (tool names are compared ignoring case): `_2`, `_3` after.
 */
export const namesFor = (key: string, names: Names): { readonly mcpName: string; readonly extensionName: string } => {
  const base = key.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, MaxServerName) || "server"
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? "" : `_${n}`
    const mcpName = `${base.slice(0, MaxServerName - suffix.length)}${suffix}`
    const valid = ExtensionNamePattern.test(mcpName) && !isReservedExtensionName(mcpName)
    const extensionName = valid ? mcpName : `mcp-${mcpName}`
    if (names.taken.has(mcpName.toLowerCase()) || names.taken.has(extensionName.toLowerCase())) continue
    // `a.b` does not take `a_b` from a server of that name, wherever it is in the file.
    if (mcpName !== key && names.verbatim.has(mcpName.toLowerCase())) continue
    names.taken.add(mcpName.toLowerCase())
    names.taken.add(extensionName.toLowerCase())
    return { mcpName, extensionName }
  }
}
