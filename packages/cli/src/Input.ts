import * as NodeStream from "@effect/platform-node/NodeStream"
import { describeOpenError } from "@abhed/host/RegularFile"
import { Console, Effect, Option, Stdio, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import type { Readable } from "node:stream"
import { InputUnreadable } from "./CliError.ts"

/**
 * The bytes of an events file, read as a stream whatever it is: a regular file, a FIFO, a process substitution
 * (`<(cat ev.jsonl)`, a pipe), a device. The open never blocks (O_NONBLOCK: a FIFO with no writer yet would
 * otherwise hold a thread that not even SIGTERM can end), and a pipe is then read as a socket is, by the event loop,
 * so no read waits in a thread either: Ctrl-C and SIGTERM end the run at any point.
 */
const eventsFile = (file: string): Stream.Stream<Uint8Array, InputUnreadable> =>
  Stream.unwrap(
    Effect.try({
      try: (): Readable => {
        const fd = NodeFs.openSync(file, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK)
        try {
          const stats = NodeFs.fstatSync(fd)
          if (stats.isFIFO() || stats.isSocket()) return new NodeNet.Socket({ fd, readable: true, writable: false })
          if (stats.isFile() || stats.isDirectory()) return NodeFs.createReadStream("", { fd }) // a folder: EISDIR, said
          // A device (a terminal): its reads must block, so it is opened again without O_NONBLOCK (its open did not
          // wait).
          NodeFs.closeSync(fd)
          return NodeFs.createReadStream(file)
        } catch (e) {
          NodeFs.closeSync(fd)
          throw e
        }
      },
      catch: (e) => new InputUnreadable({ file, detail: describeOpenError(e) })
    }).pipe(
      Effect.map((readable) =>
        NodeStream.fromReadable<Uint8Array, InputUnreadable>({
          evaluate: () => readable,
          onError: (e) => new InputUnreadable({ file, detail: describeOpenError(e) })
        })
      )
    )
  )

/** The lines of an events file, or of stdin when no file is given or it is `-`. Read lazily: a pipe streams. */
export const inputLines = (
  given: Option.Option<string>
): Effect.Effect<Stream.Stream<string, InputUnreadable>, never, Stdio.Stdio> =>
  Effect.gen(function* () {
    const file = Option.filter(given, (name) => name !== "-")
    const bytes = Option.isSome(file)
      ? eventsFile(file.value)
      : (yield* Stdio.Stdio).stdin.pipe(
          Stream.mapError((e) => new InputUnreadable({ file: "stdin", detail: e.message }))
        )
    // One line on stderr, not a stack trace: the error is marked reported (CliError.ts).
    return bytes.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.tapError((e) => Console.error(e.message))
    )
  })
