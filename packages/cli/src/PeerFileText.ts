import { readConfigText } from "@abhed/protocol/ConfigText"
import { Result } from "effect"
import type { HookFormat } from "./hook/HookFormat.ts"

/**
 * The text of a peer's file (Claude Code's or Gemini CLI's settings, or their MCP server files), read as the peer
 * reads it: Claude Code as JSON; Gemini CLI strips `//` and `/* *\/` comments first (strip-json-comments, then
 * JSON.parse: a trailing comma is still an error), so a Gemini file may have comments. The JSONC reader of
 * abhed.json reads them, with the line and column of each problem. The format is `format`, or told by `detect` from
 * what was read. `claudeNote`: why comments fail in the Claude file, said after the parser's error.
 */
export const parsePeerFile = (
  text: string,
  format: HookFormat | undefined,
  detect: (settings: unknown) => HookFormat,
  claudeNote: string
): Result.Result<{ readonly format: HookFormat; readonly settings: unknown }, string> => {
  let strictError: string
  try {
    const settings: unknown = JSON.parse(text)
    return Result.succeed({ format: format ?? detect(settings), settings })
  } catch (e) {
    strictError = `not JSON: ${e instanceof Error ? e.message : String(e)}`
  }
  const read = readConfigText(text)
  const chosen = format ?? (read.value === undefined ? undefined : detect(read.value))
  if (chosen !== "gemini") return Result.fail(read.value === undefined ? strictError : `${strictError} (${claudeNote})`)
  const [problem] = read.problems
  if (problem === undefined) return Result.succeed({ format: chosen, settings: read.value })
  const { column, line } = read.where(problem.offset)
  // The reader words a trailing comma for abhed.json; here it is Gemini CLI that refuses it.
  const message = problem.message.startsWith("trailing comma")
    ? "trailing comma (Gemini CLI reads comments, not trailing commas): remove it"
    : problem.message
  return Result.fail(`not JSON with comments: line ${line}, column ${column}: ${message}`)
}
