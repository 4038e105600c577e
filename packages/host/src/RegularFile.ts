import { Effect, Schema, type Scope } from "effect"
import * as NodeFs from "node:fs"
import type * as NodeFsPromises from "node:fs/promises"

/**
 * Opening the files a user names (a config, an audit trail, a settings file) so that a wrong path can neither hang
 * the process nor redirect what it writes. Every open is non-blocking: `open(2)` of a FIFO with no writer (or, for
 * writing, no reader) would wait forever in a thread that not even SIGTERM can end, since Node's exit joins that
 * thread. What was opened is then checked with `fstat`, on the descriptor itself (no race with a path swapped
 * meanwhile), and refused unless it is a regular file.
 */

/** The file cannot be used: missing, not a regular file, a symbolic link, someone else's. `detail` says which. */
export class FileRefused extends Schema.TaggedError<FileRefused>()("FileRefused", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.detail}`
  }
}

const { O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_WRONLY } = NodeFs.constants

/** What a non-regular file is, for the refusal. */
const kindOf = (stats: NodeFs.Stats): string =>
  stats.isDirectory()
    ? "a folder"
    : stats.isFIFO()
      ? "a FIFO (named pipe)"
      : stats.isSocket()
        ? "a socket"
        : stats.isCharacterDevice()
          ? "a character device"
          : stats.isBlockDevice()
            ? "a block device"
            : "not a regular file"

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined

/** One phrase for a failed open or read, from its errno code. */
export const describeOpenError = (error: unknown): string => {
  switch (codeOf(error)) {
    case "ENOENT":
      return "no such file"
    case "ENOTDIR":
      return "a part of the path is not a folder"
    case "EACCES":
    case "EPERM":
      return "permission denied"
    case "EISDIR":
      return "is a folder, not a regular file"
    case "ENXIO":
      // O_NONBLOCK | O_WRONLY on a FIFO that nobody reads.
      return "is a FIFO (named pipe) or a socket, not a regular file"
    case "EROFS":
      return "read-only file system"
    default:
      return error instanceof Error ? error.message : String(error)
  }
}

const refuse = (path: string, own?: { readonly [code: string]: string }) => (error: unknown) =>
  new FileRefused({ path, detail: own?.[codeOf(error) ?? ""] ?? describeOpenError(error) })

const open = (path: string, flags: number, mode?: number, own?: { readonly [code: string]: string }) =>
  Effect.acquireRelease(
    Effect.tryPromise({ try: () => NodeFs.promises.open(path, flags, mode), catch: refuse(path, own) }),
    (handle) => Effect.promise(() => handle.close()).pipe(Effect.ignore)
  )

const stat = (path: string, handle: NodeFsPromises.FileHandle) =>
  Effect.tryPromise({ try: () => handle.stat(), catch: refuse(path) })

const notRegular = (path: string, stats: NodeFs.Stats, hint: string) =>
  new FileRefused({ path, detail: `is ${kindOf(stats)}, not a regular file${hint}` })

/**
 * The text of the regular file at `path` (symbolic links followed). Anything else (a FIFO, a socket, a device, a
 * folder) is refused without waiting on it; `hint` ends that refusal (`; give it on stdin with -`).
 */
export const readRegularFile = (path: string, hint = ""): Effect.Effect<string, FileRefused> =>
  Effect.scoped(
    Effect.gen(function* () {
      const handle = yield* open(path, O_RDONLY | O_NONBLOCK)
      const stats = yield* stat(path, handle)
      if (!stats.isFile()) return yield* notRegular(path, stats, hint)
      return yield* Effect.tryPromise({ try: () => handle.readFile("utf8"), catch: refuse(path) })
    })
  )

/**
 * `path` opened for appending, for the scope's lifetime: created with `mode` if new. Refused: a symbolic link (the
 * last component is not followed: a link planted where the file is expected cannot redirect the writes), anything
 * but a regular file, and a file owned by another user (appending to someone else's file, as root say, would
 * write into whatever they pointed it at).
 */
export const openForAppend = (
  path: string,
  mode: number
): Effect.Effect<
  { readonly handle: NodeFsPromises.FileHandle; readonly stats: NodeFs.Stats },
  FileRefused,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const handle = yield* open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, mode, {
      ELOOP: "is a symbolic link: it is opened without following links; give the real file"
    })
    const stats = yield* stat(path, handle)
    if (!stats.isFile()) return yield* notRegular(path, stats, "")
    const uid = process.getuid?.()
    if (uid !== undefined && stats.uid !== uid) {
      return yield* new FileRefused({
        path,
        detail: `is owned by another user (uid ${stats.uid}, this process runs as uid ${uid}): refusing to append to it`
      })
    }
    return { handle, stats }
  })
