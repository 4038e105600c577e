import { formatIssue, parseConfig, type Config } from "@abhed/protocol"
import { Console, Effect, FileSystem, Path, Result } from "effect"
import { ConfigInvalid } from "./CliError.ts"

export interface LoadedConfig {
  readonly config: Config
  /** The config file's folder: relative `cwd`s (and the commands' relative args) resolve against it (DESIGN §5). */
  readonly baseDir: string
  readonly file: string
}

/**
 * Read and decode `abhed.json`. Every problem goes to stderr, one per line, prefixed with the file and naming
 * the path in the config (`abhed.json: extensions[1].events[0]: unknown event …`); then the run fails with exit 2.
 */
export const loadConfig = (file: string): Effect.Effect<LoadedConfig, ConfigInvalid, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const absolute = path.resolve(file)
    const text = yield* fs.readFileString(absolute).pipe(
      Effect.mapError((e) => new ConfigInvalid({ file, issues: [`cannot read the config file: ${e.message}`] }))
    )
    const parsed = parseConfig(text)
    if (Result.isFailure(parsed)) {
      return yield* new ConfigInvalid({ file, issues: parsed.failure.issues.map(formatIssue) })
    }
    return { config: parsed.success, baseDir: path.dirname(absolute), file: absolute }
  }).pipe(Effect.tapError((e) => Console.error(e.message)))
