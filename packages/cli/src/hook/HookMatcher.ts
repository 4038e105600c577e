import { Result } from "effect"
import type { HookFormat } from "./HookFormat.ts"

/**
 * A peer's `matcher`, with the peer's rules (docs/hooks.md cites them):
 * - Claude Code: omitted, `""` or `"*"` matches every tool; a matcher made only of letters, digits, `_`, `|`, `,` and
 *   spaces is an exact name or a list of exact names, split at `|` or `,`, each trimmed (`Bash`, `Edit|Write`,
 *   `Edit, Write`); anything else is a JavaScript regular expression, unanchored (`mcp__.*`, `^Notebook`). Read as a
 *   regular expression, `Edit, Write` or `Bash ` would match no tool, and the hook would never run.
 * - Gemini CLI: the matcher is trimmed first (`"run_shell_command "` is `run_shell_command`); then omitted, `""`
 *   or `"*"` matches every tool; otherwise a regular expression tested against the tool name (`read_.*`); one that
 *   does not compile is compared as an exact name. Untrimmed, a stray space would skip a deny hook on every call.
 * It is tested against the peer's name of the tool (`Bash`, not `bash`).
 */
export type Matcher =
  | { readonly _tag: "All" }
  | { readonly _tag: "Names"; readonly names: ReadonlyArray<string> }
  | { readonly _tag: "Regex"; readonly source: string; readonly regex: RegExp }

/** Any whitespace, not only spaces: a tab in a list must not turn it into a regular expression that matches nothing. */
const plainNames = /^[A-Za-z0-9_|,\s]+$/

export const all: Matcher = { _tag: "All" }

export const parseMatcher = (format: HookFormat, written: string | undefined): Result.Result<Matcher, string> => {
  const source = format === "gemini" ? written?.trim() : written
  if (source === undefined || source === "" || source === "*") return Result.succeed(all)
  if (format === "claude" && plainNames.test(source)) {
    const names = source
      .split(/[|,]/)
      .map((n) => n.trim())
      .filter((n) => n !== "")
    // Only separators and spaces: an empty matcher, which matches every tool.
    return Result.succeed(names.length === 0 ? all : { _tag: "Names", names })
  }
  try {
    return Result.succeed({ _tag: "Regex", source, regex: new RegExp(source) })
  } catch (error) {
    if (format === "gemini") return Result.succeed({ _tag: "Names", names: [source] })
    return Result.fail(`matcher ${JSON.stringify(source)} is not a valid regular expression: ${String(error)}`)
  }
}

export const matches = (matcher: Matcher, peerTool: string): boolean => {
  switch (matcher._tag) {
    case "All":
      return true
    case "Names":
      return matcher.names.includes(peerTool)
    case "Regex":
      return matcher.regex.test(peerTool)
  }
}
