import { type EventName, isEventName } from "@abhed/protocol/Event"

/**
 * Which peer's command hooks `abhed-ext hook` runs (docs/hooks.md): Claude Code's (`PreToolUse`, …) or Gemini
 * CLI's (`BeforeTool`, …). Both read one JSON object on stdin and answer with an exit code and JSON on stdout.
 */
export type HookFormat = "claude" | "gemini"
export const HookFormats: ReadonlyArray<HookFormat> = ["claude", "gemini"]

/** Our events and the peer event each one runs a hook as. Events missing here are answered `{}`. */
const claudeEvents: Partial<Record<EventName, string>> = {
  tool_call: "PreToolUse",
  tool_result: "PostToolUse",
  session_start: "SessionStart",
  session_end: "SessionEnd",
  before_compact: "PreCompact"
}

const geminiEvents: Partial<Record<EventName, string>> = {
  tool_call: "BeforeTool",
  tool_result: "AfterTool",
  session_start: "SessionStart",
  session_end: "SessionEnd",
  before_compact: "PreCompress"
}

const table = (format: HookFormat) => (format === "claude" ? claudeEvents : geminiEvents)

/** The peer's events this adapter runs hooks for, in our events' order. */
export const peerEvents = (format: HookFormat): ReadonlyArray<string> => Object.values(table(format))

/** The peer's event name for one of ours, if the peer has one. */
export const peerEvent = (format: HookFormat, event: string): string | undefined =>
  isEventName(event) ? table(format)[event] : undefined

/** Our event for one of the peer's, if we have one (`import-hooks`). */
export const ourEvent = (format: HookFormat, peer: string): EventName | undefined => {
  for (const [ours, theirs] of Object.entries(table(format))) if (theirs === peer && isEventName(ours)) return ours
  return undefined
}
