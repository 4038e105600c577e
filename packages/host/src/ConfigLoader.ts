import { type Config, ConfigIssue, formatIssue, parseConfig } from "@abhed/protocol"
import { Effect, FileSystem, Path, Result, Schema } from "effect"

/**
 * Loading `abhed.json` from a path (docs/design.md#configuration): read the file, parse and decode it, and note its folder, against
 * which relative `cwd`s (and so the commands' relative arguments) resolve. Two typed failures: the file could not
 * be read, or it was read and is not a valid config.
 */

export interface LoadedConfig {
  readonly config: Config
  /** The config file's folder: relative `cwd`s resolve against it. */
  readonly baseDir: string
  /** The config file's absolute path (`-` for a config read from stdin). */
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

/**
 * Decode a config's text (docs/design.md#configuration). `file` names it in the problems (`abhed.json:3:17: …`), `absolute` is kept as
 * the loaded config's `file`; `baseDir` is where its relative `cwd`s resolve (a config read from stdin has no folder:
 * the caller says which).
 */
export const decodeConfig = (
  text: string,
  source: { readonly file: string; readonly baseDir: string; readonly absolute: string }
): Effect.Effect<LoadedConfig, ConfigInvalid> => {
  const parsed = parseConfig(text)
  return Result.isFailure(parsed)
    ? Effect.fail(new ConfigInvalid({ file: source.file, issues: parsed.failure.issues }))
    : Effect.succeed({ config: parsed.success, baseDir: source.baseDir, file: source.absolute })
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
    return yield* decodeConfig(text, { file, baseDir: path.dirname(absolute), absolute })
  })
