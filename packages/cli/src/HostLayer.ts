import { ExtensionHost } from "@abhed/host/ExtensionHost"
import type { LoadedConfig } from "./ConfigFile.ts"

/**
 * The process-backed host for a loaded config: extensions spawned with `baseDir` (the config file's folder) as
 * the base for relative `cwd`s, started with `session_start` + `list_tools`, closed with `session_end`.
 */
export const processHost = (loaded: LoadedConfig) => (sessionId: string) =>
  ExtensionHost.layer(loaded.config, { sessionId, baseDir: loaded.baseDir })
