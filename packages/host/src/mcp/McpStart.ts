import type { ExtensionConfig } from "@abhed/protocol"
import { Effect, type Scope } from "effect"
import type { Extension } from "../Extension.ts"
import type * as ProcessExtension from "../ProcessExtension.ts"

/**
 * Starts an MCP server's extension (McpExtension.ts), loading it, and the MCP client it speaks through, when the first
 * one starts: most configs have no MCP server, and the client (effect's ai and rpc modules) is much of what a host
 * would load otherwise. Once loaded, the start is McpExtension's own: its spawn failure, timeouts and death are the
 * same. A module of this package that cannot be loaded is a broken installation, a defect.
 */
export const make = (
  config: ExtensionConfig,
  options: ProcessExtension.Options
): Effect.Effect<Extension, never, Scope.Scope> =>
  Effect.flatMap(
    Effect.promise(() => import("./McpExtension.ts")),
    (McpExtension) => McpExtension.make(config, options)
  )
