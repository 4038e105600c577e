import { type Config, ConfigIssue, formatIssue, parseConfig } from "@abhed/protocol"
import { Effect, FileSystem, Path, Result, Schema } from "effect"

/**
 * Loading `abhed.json` from a path (DESIGN §5): read the file, parse and decode it, and note its folder, against
 * which relative `cwd`s (and so the commands' relative arguments) resolve. Two typed failures: the file could not
 * be read, or it was read and is not a valid config.
 */

export interface LoadedConfig {
  readonly config: Config
  /** The config file's folder: relative `cwd`s resolve against it. */
  readonly baseDir: string
  /** The config file's absolute path. */
  readonly file: string
}

/** The config file could not be read (missing, a folder, no permission). `file` is the path as given. */
export class ConfigUnreadable extends Schema.TaggedError<ConfigUnreadable>()("ConfigUnreadable", {
  file: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.file}: cannot read the config file: ${this.detail}`
  }
}

/** The config file was read and is invalid. `issues` lists every problem, in document order. */
export class ConfigInvalid extends Schema.TaggedError<ConfigInvalid>()("ConfigInvalid", {
  file: Schema.String,
  issues: Schema.Array(ConfigIssue)
}) {
  /** One problem per line, each prefixed with the file: `abhed.json:3:17: extensions[0].events[0]: unknown event …`. */
  override get message(): string {
    return this.issues.map((issue) => formatIssue(issue, this.file)).join("\n")
  }
}

/** Read and decode the config at `file` (relative to the current directory). */
export const loadConfig = (
  file: string
): Effect.Effect<LoadedConfig, ConfigUnreadable | ConfigInvalid, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const absolute = path.resolve(file)
    const text = yield* fs.readFileString(absolute).pipe(
      Effect.mapError((e) => new ConfigUnreadable({ file, detail: e.message }))
    )
    const parsed = parseConfig(text)
    if (Result.isFailure(parsed)) return yield* new ConfigInvalid({ file, issues: parsed.failure.issues })
    return { config: parsed.success, baseDir: path.dirname(absolute), file: absolute }
  })
