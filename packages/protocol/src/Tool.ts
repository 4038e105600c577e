import { Schema } from "effect"

/** A tool an extension declares in its `list_tools` reply. */
export const ToolDeclaration = Schema.Struct({
  name: Schema.NonEmptyString,
  description: Schema.String,
  input_schema: Schema.Record(Schema.String, Schema.Unknown)
})
export type ToolDeclaration = typeof ToolDeclaration.Type
