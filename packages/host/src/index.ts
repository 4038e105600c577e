export * from "./AuditLog.ts"
export * from "./Extension.ts"
export * from "./ExtensionError.ts"
export * as ExtensionHost from "./ExtensionHost.ts"
export {
  ExtensionHost as ExtensionHostService,
  ToolOwnerUnavailable,
  UnknownTool,
  type CompactOutcome,
  type ContextOutcome,
  type HostOptions,
  type InvokeToolOutcome,
  type SystemOutcome,
  type ToolCallOutcome,
  type ToolResultOutcome,
  type ToolsOutcome
} from "./ExtensionHost.ts"
