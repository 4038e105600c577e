import { loadConfig as loadConfigFile, type LoadedConfig } from "@abhed/host"
import { Console, Effect, type FileSystem, type Path } from "effect"
import { ConfigRejected } from "./CliError.ts"

export type { LoadedConfig }

/**
 * Read and decode `abhed.json` with the host's loader. Every problem goes to stderr, one per line, prefixed with
 * the file and naming the path in the config (`abhed.json: extensions[1].events[0]: unknown event …`); then the run
 * fails with exit 2, whether the file could not be read or is invalid.
 */
export const loadConfig = (file: string): Effect.Effect<LoadedConfig, ConfigRejected, FileSystem.FileSystem | Path.Path> =>
  loadConfigFile(file).pipe(
    Effect.mapError((e) => new ConfigRejected({ file, detail: e.message })),
    Effect.tapError((e) => Console.error(e.message))
  )
