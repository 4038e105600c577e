// Submodule imports, not "effect": the SDK loads this file on its own when a request first reaches a handler, and
// the whole effect index would cost an extension ~15 MiB more (docs/extensions.md).
import * as Schema from "effect/Schema"

/**
 * What a declared tool name must look like (docs/design.md#combination): the rule model providers impose on function
 * names, letters, digits, `_` and `-`, 1 to 64 characters. Not `.`: one declared `a.b` would make every model request
 * that carries the extension tools fail. ASCII only, so no look-alike (`b\u0430sh`, `bash\u200b`, `bash `) can pass for
 * a built-in, and a case-insensitive comparison is exact.
 */
export const ToolNamePattern = /^[A-Za-z0-9_-]{1,64}$/

/** `ToolNamePattern` in words, for errors and notes. */
export const ToolNameRule = "letters, digits, _ and - only, 1 to 64 characters"

/**
 * Names the pattern lets through that a JavaScript record cannot hold as a key: assigning `__proto__` on a plain
 * object sets its prototype instead (a tool record, effect/ai's among them, would lose the tool and inherit the
 * declaration). Compared ignoring case, like every tool name.
 */
const Unholdable: ReadonlySet<string> = new Set(["__proto__"])

export const isToolName = (name: string): boolean => ToolNamePattern.test(name) && !Unholdable.has(name.toLowerCase())

/**
 * A tool an extension declares in its `list_tools` reply. On the wire `name` is any string: a name that does not
 * match `ToolNamePattern` rejects that declaration only (audited and warned about), and the extension stays alive.
 */
export const ToolDeclaration = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  input_schema: Schema.Record(Schema.String, Schema.Unknown)
})
export type ToolDeclaration = typeof ToolDeclaration.Type
