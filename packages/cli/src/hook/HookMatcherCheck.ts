import { Result } from "effect"
import type { HookFormat } from "./HookFormat.ts"
import { matches, parseMatcher } from "./HookMatcher.ts"
import { defaultToolNames } from "./HookToolNames.ts"

/**
 * `import-hooks`: what a tool matcher will in fact match here, said when it is not what its author likely meant. A
 * matcher that matches none of the peer's own tools (`bash` for `Bash`, permission syntax such as `Bash(git:*)`,
 * `Edit:.*\.cs`) runs its hook on no call, in the peer as here, without a word; one that names a peer tool with no
 * counterpart among ours by default (`MultiEdit`, `WebFetch`) runs it only on a tool of exactly that name.
 */

/** The peers' built-in tools, by their documentation (a matcher matching any of them is not a typo). */
const peerTools: Readonly<Record<HookFormat, ReadonlyArray<string>>> = {
  claude: [
    "Agent",
    "AskUserQuestion",
    "Bash",
    "BashOutput",
    "Edit",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "KillShell",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Read",
    "SlashCommand",
    "Skill",
    "Task",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write"
  ],
  gemini: [
    "glob",
    "google_web_search",
    "list_directory",
    "read_file",
    "read_many_files",
    "replace",
    "run_shell_command",
    "save_memory",
    "search_file_content",
    "web_fetch",
    "write_file",
    "write_todos"
  ]
}

/** A warning about `matcher` (on a tool event), or undefined when it matches what it seems to. */
export const matcherWarning = (format: HookFormat, matcher: string | undefined): string | undefined => {
  const parsed = parseMatcher(format, matcher)
  if (Result.isFailure(parsed) || parsed.success._tag === "All" || matcher === undefined) return undefined
  // An MCP tool's name is the server's: nothing to check it against.
  if (matcher.includes("mcp__")) return undefined
  const shown = JSON.stringify(matcher)
  const known = peerTools[format]
  const matched = known.filter((tool) => matches(parsed.success, tool))
  if (matched.length === 0) {
    return (
      `its matcher ${shown} matches none of ${format === "claude" ? "Claude Code" : "Gemini CLI"}'s tools ` +
      `(${known.join(", ")}) and names no MCP tool: the hook runs only on a tool it matches by name; check its ` +
      "spelling (names are case-sensitive, and a matcher is a name, a list or a regular expression, not a permission rule)"
    )
  }
  // The peer's tools it names that none of ours is shown as: each of a list; of a regular expression, only when it
  // matches none that is (`read_.*` also covers read_many_files, and is meant for read_file).
  const ours = Object.values(defaultToolNames(format))
  const unmapped =
    parsed.success._tag === "Names"
      ? parsed.success.names.filter((name) => known.includes(name) && !ours.includes(name))
      : matched.some((tool) => ours.includes(tool))
        ? []
        : matched
  if (unmapped.length === 0) return undefined
  return (
    `its matcher covers ${unmapped.join(", ")}, which no tool here is called by default: the hook runs on ` +
    `${unmapped.length === 1 ? "it" : "them"} only if your agent's tool has exactly that name; else add ` +
    `--tool-names=YOURS=${unmapped[0] ?? ""} to the extension's args and {"tool": "YOURS"} to its match`
  )
}
