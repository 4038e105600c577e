export * from "./AuditLog.ts"
export * from "./Extension.ts"
export * from "./ExtensionError.ts"
export * from "./ExtensionHost.ts"
