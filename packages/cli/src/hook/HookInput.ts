import type { Request } from "@abhed/protocol/Request"
import type { HookFormat } from "./HookFormat.ts"
import { peerEvent } from "./HookFormat.ts"
import { argsToPeer, peerToolName, type ToolNames } from "./HookToolNames.ts"

/**
 * One of our requests, as the SDK read it (typed, checked against the protocol), as the JSON a peer's hook reads on
 * stdin (docs/hooks.md has the field tables).
 * Claude Code: `session_id`, `cwd`, `permission_mode`, `hook_event_name`, then per event `tool_name`, `tool_input`,
 * `tool_use_id` (+ `tool_response` after the tool), `source` / `reason` / `trigger`.
 * Gemini CLI: `session_id`, `cwd`, `hook_event_name`, `timestamp`, then `tool_name`, `tool_input` (+ `tool_response`).
 */

export type Json = Readonly<Record<string, unknown>>

/** A tool event's parts, when the request is one (`tool_call`, `tool_result`). */
export interface ToolPart {
  readonly callId: string
  readonly tool: string
  readonly peerTool: string
  readonly args: Json
  readonly content: string
  readonly isError: boolean
}

export const toolPart = (request: Request, names: ToolNames): ToolPart | undefined => {
  if (request.event !== "tool_call" && request.event !== "tool_result") return undefined
  const result = request.event === "tool_result" ? request : undefined
  return {
    callId: request.call_id,
    tool: request.tool,
    peerTool: peerToolName(names, request.tool),
    args: request.args,
    content: result?.content ?? "",
    isError: result?.is_error ?? false
  }
}

export interface InputContext {
  readonly cwd: string
  /** ISO 8601, for Gemini's `timestamp`. */
  readonly now: string
  readonly names: ToolNames
}

/** What the hook reads on stdin, or undefined when the peer has no such event (the reply is then `{}`). */
export const peerInput = (
  format: HookFormat,
  request: Request,
  context: InputContext,
  tool: ToolPart | undefined = toolPart(request, context.names)
): Json | undefined => {
  const event = request.event
  const hookEvent = peerEvent(format, event)
  if (hookEvent === undefined) return undefined
  const base: Record<string, unknown> =
    format === "claude"
      ? {
          session_id: request.session_id,
          cwd: context.cwd,
          permission_mode: "default",
          hook_event_name: hookEvent
        }
      : { session_id: request.session_id, cwd: context.cwd, hook_event_name: hookEvent, timestamp: context.now }
  if (tool !== undefined) {
    base["tool_name"] = tool.peerTool
    base["tool_input"] = argsToPeer(tool.peerTool, tool.args)
    if (format === "claude") base["tool_use_id"] = tool.callId
    if (event === "tool_result") base["tool_response"] = toolResponse(format, tool)
    return base
  }
  if (format === "claude") {
    if (event === "session_start") base["source"] = "startup"
    if (event === "session_end") base["reason"] = "other"
    if (event === "before_compact") Object.assign(base, { trigger: "auto", custom_instructions: "" })
  } else {
    if (event === "session_start") base["source"] = "startup"
    if (event === "session_end") base["reason"] = "exit"
    if (event === "before_compact") base["trigger"] = "auto"
  }
  return base
}

/**
 * The tool's output in the peer's shape. Ours is one string and a flag; Claude's Bash answers
 * `{stdout, stderr, interrupted, isImage}`, its other tools vary, so every tool gets `content` and `is_error` and the
 * bash tool also `stdout`. Gemini's is `{llmContent, returnDisplay, error?}`.
 */
const toolResponse = (format: HookFormat, tool: ToolPart): Json =>
  format === "claude"
    ? tool.peerTool === "Bash"
      ? {
          stdout: tool.content,
          stderr: "",
          interrupted: false,
          isImage: false,
          content: tool.content,
          is_error: tool.isError
        }
      : { content: tool.content, is_error: tool.isError }
    : tool.isError
      ? { llmContent: tool.content, returnDisplay: tool.content, error: tool.content }
      : { llmContent: tool.content, returnDisplay: tool.content }
