export * as GuardedToolkit from "./GuardedToolkit.ts"
export * as ScriptedModel from "./ScriptedModel.ts"
export * as ToolArgs from "./ToolArgs.ts"
