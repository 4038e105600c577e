import { combineTools, type RejectionReason } from "@abhed/core"
import { ToolNameRule } from "@abhed/protocol"
import type { ToolsOutcome } from "../Outcome.ts"
import { single, type DispatchContext } from "./Dispatch.ts"

/**
 * list_tools (docs/design.md#combination): the tools extensions declare, minus the names rejected, each rejection
 * with its note.
 */

const rejection: { readonly [R in RejectionReason]: string } = {
  invalid_name: `not a valid tool name (${ToolNameRule}; not __proto__)`,
  builtin: "collides with a built-in tool (names compare ignoring case)",
  duplicate: "declared more than once (names compare ignoring case)",
  input_schema: "invalid input_schema"
}

/** A tool name for a note, with every character outside printable ASCII escaped: a look-alike must show. */
const quoteToolName = (name: string): string =>
  `"${name.replace(/[^\x20-\x7e]|["\\]/g, (c) => c === "\"" || c === "\\" ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}"`

/** The note (and startup warning) for a rejected tool. */
export const rejectedNote = (r: ToolsOutcome["rejected"][number]) =>
  `tool ${quoteToolName(r.name)} rejected for ${r.extensions.join(", ")}: ${rejection[r.reason]}${r.detail !== undefined ? `: ${r.detail}` : ""}`

export const listTools = (ctx: DispatchContext) =>
  single(ctx, "list_tools", { event: "list_tools", session_id: ctx.sessionId }, (replies) => {
    const outcome = combineTools(ctx.builtin, replies)
    return { outcome: outcome satisfies ToolsOutcome, notes: outcome.rejected.map(rejectedNote) }
  })
