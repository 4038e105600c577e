import { Console, Effect, FileSystem, Option, Stdio, Stream } from "effect"
import { InputUnreadable } from "./CliError.ts"

/** The lines of an events file, or of stdin when no file is given or it is `-`. Read lazily: a pipe streams. */
export const inputLines = (
  given: Option.Option<string>
): Effect.Effect<Stream.Stream<string, InputUnreadable>, never, FileSystem.FileSystem | Stdio.Stdio> =>
  Effect.gen(function*() {
    const file = Option.filter(given, (name) => name !== "-")
    const bytes = Option.isSome(file)
      ? (yield* FileSystem.FileSystem).stream(file.value).pipe(
        Stream.mapError((e) => new InputUnreadable({ file: file.value, detail: e.message }))
      )
      : (yield* Stdio.Stdio).stdin.pipe(Stream.mapError((e) => new InputUnreadable({ file: "stdin", detail: e.message })))
    // One line on stderr, not a stack trace: the error is marked reported (CliError.ts).
    return bytes.pipe(Stream.decodeText(), Stream.splitLines, Stream.tapError((e) => Console.error(e.message)))
  })
