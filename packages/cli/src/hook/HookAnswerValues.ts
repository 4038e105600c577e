/**
 * What a peer's JSON answer may hold in its fields, beyond their names (HookOutcome.ts reads the answer): the values
 * each peer knows for its decisions, and Claude's MCP output rewrite as our content.
 */

/** The values each peer knows for `decision` and (Claude) `permissionDecision`. */
export const claudeDecisions = ["approve", "block"]
export const claudePermissions = ["allow", "deny", "ask", "defer"]
export const geminiDecisions = ["ask", "block", "deny", "approve", "allow"]

/** Words that would permit in one peer or the other: here they lift nothing, so none of them can lose a veto. */
const allowWords: ReadonlyArray<unknown> = ["allow", "approve", "defer"]

/**
 * A `decision`-like field with a value the peer does not know (`"Deny"`, Claude's `decision: "deny"`, a number,
 * `continue: "false"`): the peer rejects such an answer (a non-blocking error), and a hook that meant to deny would
 * pass without a word. Here it is a failed run: said in the reply's reason, and a block with --fail-closed. Absent or null is no answer, and an
 * allow word the peer would not take (Claude's `decision: "allow"`) is no opinion as any allow is.
 */
export const tellUnknown = (
  field: string,
  value: unknown,
  known: ReadonlyArray<unknown>,
  unknown: (problem: string) => void
): void => {
  if (value === undefined || value === null || allowWords.includes(value) || known.includes(value)) return
  unknown(`it answered ${field} ${JSON.stringify(value).slice(0, 80)}, which is not one of ${known.join(", ")}`)
}

/**
 * Claude's `updatedMCPToolOutput` (PostToolUse, MCP tools only) as our content: a string as it is, anything else
 * (MCP content blocks) as its JSON. A hook that redacts an MCP tool's output must not have the output shown whole.
 */
export const mcpOutput = (value: unknown): string | undefined =>
  value === undefined || value === null ? undefined : typeof value === "string" ? value : JSON.stringify(value)

/**
 * Claude's `permissionDecision` written beside `hookSpecificOutput` instead of inside it: Claude Code does not read it
 * there, so a deny written so is no answer, and the run says so (as for an unknown value).
 */
export const tellMisplaced = (value: unknown, unknown: (problem: string) => void): void => {
  if (value === undefined || value === null || allowWords.includes(value)) return
  unknown(
    `it answered permissionDecision ${JSON.stringify(value).slice(0, 80)} outside hookSpecificOutput, where it is not read`
  )
}

/**
 * A rewrite field (`updatedInput`, `tool_input`, `tool_output`) when it has its shape; one present in another shape
 * (a string for an object) is a rewrite lost, which would run or show what the hook meant to change: told to `unknown`,
 * it makes the run a failed one.
 */
export const rewrite = <A>(
  value: unknown,
  field: string,
  is: (u: unknown) => u is A,
  shape: string,
  unknown: (problem: string) => void
): A | undefined => {
  if (is(value)) return value
  if (value !== undefined && value !== null) unknown(`its ${field} is not ${shape}: the rewrite was not read`)
  return undefined
}
