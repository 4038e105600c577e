export * as EffectExtension from "./EffectExtension.ts"
export type { EventName, ReplyOf, RequestOf, ToolDeclaration } from "@abhed/protocol"
