import { printableLines } from "@abhed/host/Printable"
import {
  type ConfigInvalid,
  ConfigUnreadable,
  decodeConfig,
  loadConfig as loadConfigFile,
  type LoadedConfig
} from "@abhed/host/ConfigLoader"
import { Console, Effect, type FileSystem, Path, Stdio, Stream } from "effect"
import { ConfigRejected } from "./CliError.ts"

export type { LoadedConfig }

/** The config file name that means stdin; its problems say `stdin:3:17: …`. */
export const StdinConfig = "-"

/**
 * Read and decode `abhed.json` with the host's loader; `-` reads it from stdin (docs/cli.md), and its relative
 * `cwd`s then resolve against the current directory. Every problem goes to stderr, one per line, prefixed with
 * the file and naming the path in the config (`abhed.json: extensions[1].events[0]: unknown event …`); then the run
 * fails with exit 2, whether the file could not be read or is invalid.
 */
export const loadConfig = (
  file: string
): Effect.Effect<LoadedConfig, ConfigRejected, FileSystem.FileSystem | Path.Path | Stdio.Stdio> => {
  const source: Effect.Effect<
    LoadedConfig,
    ConfigUnreadable | ConfigInvalid,
    FileSystem.FileSystem | Path.Path | Stdio.Stdio
  > = file === StdinConfig ? fromStdin : loadConfigFile(file)
  return source.pipe(
    Effect.mapError(
      (e) =>
        new ConfigRejected({
          file,
          // A FIFO or a process substitution is refused (it could hang the open): say what works instead.
          detail:
            e._tag === "ConfigUnreadable" && e.detail.includes("not a regular file")
              ? `${e.message}; give it as a file, or on stdin with -c -`
              : e.message
        })
    ),
    // A config may be a repository's, its text anyone's: the problems quote it, escaped (JSON leaves C1 controls and
    // bidirectional overrides as they are).
    Effect.tapError((e) => Console.error(printableLines(e.message).join("\n")))
  )
}

const fromStdin = Effect.gen(function* () {
  const path = yield* Path.Path
  const text = yield* (yield* Stdio.Stdio).stdin.pipe(
    Stream.decodeText(),
    Stream.mkString,
    Effect.mapError((e) => new ConfigUnreadable({ file: "stdin", detail: e.message }))
  )
  return yield* decodeConfig(text, { file: "stdin", baseDir: path.resolve("."), absolute: StdinConfig })
})
