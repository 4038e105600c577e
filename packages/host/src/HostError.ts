import { Schema } from "effect"

/** A programming error: `make` was given two extensions with one name (a config file cannot express this). */
export class DuplicateExtensionNames extends Schema.TaggedError<DuplicateExtensionNames>()("DuplicateExtensionNames", {
  names: Schema.Array(Schema.String)
}) {
  override get message() {
    return `extension names must be unique: ${this.names.join(", ")}`
  }
}

export class UnknownTool extends Schema.TaggedError<UnknownTool>()("UnknownTool", { tool: Schema.String }) {
  override get message() {
    return `no extension provides the tool "${this.tool}"`
  }
}

export class ToolOwnerUnavailable extends Schema.TaggedError<ToolOwnerUnavailable>()("ToolOwnerUnavailable", {
  tool: Schema.String,
  extension: Schema.String,
  cause: Schema.String
}) {
  override get message() {
    return `tool "${this.tool}": extension ${this.extension} unavailable: ${this.cause}`
  }
}
