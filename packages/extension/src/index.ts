export * as Extension from "./Extension.ts"
/** The wire types an extension author needs, so an extension depends on this package alone. */
export type { EventName, ReplyOf, RequestOf, ToolDeclaration } from "@abhed/protocol"
