import { Result } from "effect"
import type { HookFormat } from "./HookFormat.ts"

/**
 * A peer's `matcher`, with the peer's rules (docs/hooks.md cites them):
 * - Claude Code: omitted, `""` or `"*"` matches every tool; a matcher made only of letters, digits, `_` and `|` is
 *   an exact name or a `|` list of exact names (`Bash`, `Edit|Write`); anything else is a JavaScript regular
 *   expression, unanchored (`mcp__.*`, `^Notebook`).
 * - Gemini CLI: the matcher is trimmed first (`"run_shell_command "` is `run_shell_command`); then omitted, `""`
 *   or `"*"` matches every tool; otherwise a regular expression tested against the tool name (`read_.*`); one that
 *   does not compile is compared as an exact name. Untrimmed, a stray space would skip a deny hook on every call.
 *   Claude Code's matcher is taken as written (its documentation says nothing of trimming).
 * It is tested against the peer's name of the tool (`Bash`, not `bash`).
 */
export type Matcher =
  | { readonly _tag: "All" }
  | { readonly _tag: "Names"; readonly names: ReadonlyArray<string> }
  | { readonly _tag: "Regex"; readonly source: string; readonly regex: RegExp }

const plainNames = /^[A-Za-z0-9_|]+$/

export const all: Matcher = { _tag: "All" }

export const parseMatcher = (format: HookFormat, written: string | undefined): Result.Result<Matcher, string> => {
  const source = format === "gemini" ? written?.trim() : written
  if (source === undefined || source === "" || source === "*") return Result.succeed(all)
  if (format === "claude" && plainNames.test(source)) {
    return Result.succeed({ _tag: "Names", names: source.split("|").filter((n) => n !== "") })
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
