import { isToolName, type ListToolsReply, type ToolDeclaration } from "@abhed/protocol"
import { Result } from "effect"
import { compileInputSchema } from "./InputSchema.ts"
import type { Named } from "./Named.ts"
import { NameOrder, sortByName } from "./Named.ts"

export interface AcceptedTool {
  readonly extension: string
  readonly tool: ToolDeclaration
}

/**
 * Why a declaration was rejected: `invalid_name` (not `^[A-Za-z0-9_-]{1,64}$`), `builtin` (equal to a built-in
 * tool, ignoring case), `duplicate` (declared more than once, ignoring case) or `input_schema` (declared once, with
 * an input_schema that cannot be compiled to check the model's args against; `detail` says why).
 */
export type RejectionReason = "invalid_name" | "builtin" | "duplicate" | "input_schema"

export interface RejectedTool {
  /** The name as declared. */
  readonly name: string
  /** Every extension that declared the name with this spelling, sorted, each once. */
  readonly extensions: ReadonlyArray<string>
  /** "builtin" wins when a name is both a built-in and declared twice. */
  readonly reason: RejectionReason
  readonly detail?: string | undefined
}

export interface ToolsOutcome {
  /** Sorted by tool name. */
  readonly accepted: ReadonlyArray<AcceptedTool>
  /** Sorted by tool name. */
  readonly rejected: ReadonlyArray<RejectedTool>
  /** What extensions said of their tools (`warnings` in a reply), by extension name; absent when none did. */
  readonly warnings?: ReadonlyArray<ToolWarning>
}

/** A warning an extension gave with its tools (a tool it renamed, one it left out), bounded (events/ListTools.ts). */
export interface ToolWarning {
  readonly extension: string
  readonly text: string
}

/** Names compare ignoring case (valid names are ASCII, so this is exact): `BASH` is `bash`. */
const fold = (name: string): string => name.toLowerCase()

const distinctSorted = (names: Iterable<string>): Array<string> => [...new Set(names)].sort(NameOrder)

/**
 * `list_tools` (docs/design.md#combination): the union of the declared tools. A declaration whose name is not a valid
 * tool name is rejected (a look-alike such as `bash\u200b` or `b\u0430sh` would escape the policy's rules for `bash`).
 * A name declared more than once (by two extensions, or twice by one) or equal to a built-in tool, both compared
 * ignoring case, is rejected for every declarer: picking a winner would make the outcome depend on load order, and
 * shadowing a built-in would let an extension impersonate it.
 */
export const combineTools = (
  builtin: ReadonlyArray<string>,
  replies: ReadonlyArray<Named<ListToolsReply>>
): ToolsOutcome => {
  const builtins = new Set(builtin.map(fold))
  const byKey = new Map<string, Array<AcceptedTool>>()
  const invalid = new Map<string, Array<string>>()
  for (const { name, value } of sortByName(replies)) {
    for (const tool of value.tools ?? []) {
      if (!isToolName(tool.name)) {
        const list = invalid.get(tool.name)
        if (list === undefined) invalid.set(tool.name, [name])
        else list.push(name)
        continue
      }
      const key = fold(tool.name)
      const list = byKey.get(key)
      if (list === undefined) byKey.set(key, [{ extension: name, tool }])
      else list.push({ extension: name, tool })
    }
  }
  const accepted: Array<AcceptedTool> = []
  const rejected: Array<RejectedTool> = []
  for (const [key, declarations] of byKey) {
    const first = declarations[0]
    if (first !== undefined && declarations.length === 1 && !builtins.has(key)) {
      const compiled = compileInputSchema(first.tool.input_schema)
      if (Result.isSuccess(compiled)) accepted.push(first)
      else
        rejected.push({
          name: first.tool.name,
          extensions: [first.extension],
          reason: "input_schema",
          detail: compiled.failure
        })
      continue
    }
    const reason = builtins.has(key) ? "builtin" : "duplicate"
    // Grouped by spelling in one pass: one reply may hold thousands of case variants of one name.
    const bySpelling = new Map<string, Array<string>>()
    for (const { extension, tool } of declarations) {
      const spelling = tool.name
      const extensions = bySpelling.get(spelling)
      if (extensions === undefined) bySpelling.set(spelling, [extension])
      else extensions.push(extension)
    }
    for (const [spelling, extensions] of bySpelling)
      rejected.push({ name: spelling, extensions: distinctSorted(extensions), reason })
  }
  for (const [name, extensions] of invalid)
    rejected.push({ name, extensions: distinctSorted(extensions), reason: "invalid_name" })
  accepted.sort((a, b) => NameOrder(a.tool.name, b.tool.name))
  // A spelling is either invalid or in exactly one group: names are unique here.
  rejected.sort((a, b) => NameOrder(a.name, b.name))
  return { accepted, rejected }
}
