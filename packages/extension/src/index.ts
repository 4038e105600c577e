export * as Extension from "./Extension.ts"
