import { type Config, ConfigIssue, formatIssue, parseConfig } from "@abhed/protocol"
import { Effect, Path, Result, Schema } from "effect"
import * as NodeFs from "node:fs"
import { describeOpenError, readRegularFile } from "./RegularFile.ts"

/**
 * Loading `abhed.json` from a path (docs/design.md#configuration): read the file, parse and decode it, and note its
 * folder, against which relative `cwd`s (and so the commands' relative arguments) resolve. Two typed failures: the file
 * could not be read, or it was read and is not a valid config.
 */

export interface LoadedConfig {
  readonly config: Config
  /** The config file's folder: relative `cwd`s resolve against it. */
  readonly baseDir: string
  /** The config file's absolute path, symbolic links resolved (`-` for a config read from stdin). */
  readonly file: string
}

/** The config file could not be read (missing, not a regular file, no permission). `file` is the path as given. */
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
 * Decode a config's text (docs/design.md#configuration). `file` names it in the problems (`abhed.json:3:17: …`),
 * `absolute` is kept as the loaded config's `file`; `baseDir` is where its relative `cwd`s resolve (a config read from
 * stdin has no folder: the caller says which).
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

/**
 * Read and decode the config at `file` (relative to the current directory). A symbolic link is resolved first: the
 * relative paths in the config resolve against the folder of the real file, so a link elsewhere runs the same
 * extensions (against the link's folder, a relative guard script would not be found, and its veto lost). Anything
 * but a regular file (a FIFO, a device) is refused without waiting on it.
 */
export const loadConfig = (file: string): Effect.Effect<LoadedConfig, ConfigUnreadable | ConfigInvalid, Path.Path> =>
  Effect.gen(function* () {
    const path = yield* Path.Path
    const absolute = yield* Effect.tryPromise({
      try: () => NodeFs.promises.realpath(path.resolve(file)),
      catch: (e) => new ConfigUnreadable({ file, detail: describeOpenError(e) })
    })
    const text = yield* readRegularFile(absolute).pipe(
      Effect.mapError((e) => new ConfigUnreadable({ file, detail: e.detail }))
    )
    return yield* decodeConfig(text, { file, baseDir: path.dirname(absolute), absolute })
  })
