import { printable } from "@abhed/host/Printable"
import { Console, Effect, Queue, type Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * The files `abhed-ext run --watch` watches, and how: each through its folder, from the nearest folder that exists,
 * a symbolic link with where it leads; a folder the system will not watch is said on stderr.
 */

/** `file`, and where it leads when it is a symbolic link (a script kept in a dotfiles folder): an edit there counts. */
export const withTarget = (file: string): ReadonlyArray<string> => {
  try {
    const real = NodeFs.realpathSync(file)
    return real === file ? [file] : [file, real]
  } catch {
    return [file]
  }
}

/**
 * Where a project layer for `cwd` may be: `.abhed/abhed.json` in `cwd` and in each parent up to the repository's
 * root (the folder holding `.git`), or only up to the project's `root` when one was found (a nearer one would take
 * its place); outside a repository, in `cwd` alone. The project layer is looked for there, so that is watched.
 */
export const projectPlaces = (cwd: string, root: string | undefined): ReadonlyArray<string> => {
  const chain: Array<string> = []
  let dir = cwd
  try {
    dir = NodeFs.realpathSync(cwd)
  } catch {
    // Gone: looked for where it was.
  }
  for (;;) {
    chain.push(NodePath.join(dir, ".abhed", "abhed.json"))
    if (dir === root || NodeFs.existsSync(NodePath.join(dir, ".git"))) return chain
    const parent = NodePath.dirname(dir)
    if (parent === dir) return chain.slice(0, 1)
    dir = parent
  }
}

/**
 * Where to watch for `file`: its folder and name, or, while the folder is missing (no `~/.config/abhed` yet), the
 * nearest folder that exists and the name of the first one missing below it. Its creation wakes a reload, which
 * watches again from there, so a layer created with its folders mid-session is seen.
 */
const watchPoint = (file: string): { readonly dir: string; readonly name: string } => {
  let name = NodePath.basename(file)
  let dir = NodePath.dirname(file)
  while (!NodeFs.existsSync(dir) && NodePath.dirname(dir) !== dir) {
    name = NodePath.basename(dir)
    dir = NodePath.dirname(dir)
  }
  return { dir, name }
}

/**
 * Wakes `wake` on each change to `files` (the loop debounces: an editor's save is several events). Each file is
 * watched through its folder, so a file replaced by a rename (how editors save) or created later is seen.
 */
export const changes = (
  files: ReadonlyArray<string>,
  wake: Queue.Queue<void>
): Effect.Effect<ReadonlySet<string>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const byDir = new Map<string, Set<string>>()
    for (const file of files) {
      const { dir, name } = watchPoint(NodePath.resolve(file))
      const names = byDir.get(dir) ?? new Set<string>()
      names.add(name)
      byDir.set(dir, names)
    }
    const unwatched = new Map<string, string>()
    for (const [dir, names] of byDir) {
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          try {
            return NodeFs.watch(dir, { persistent: false }, (_event, name) => {
              if (name === null || names.has(name.toString())) Queue.offerUnsafe(wake, undefined)
            }).on("error", () => Queue.offerUnsafe(wake, undefined))
          } catch (e) {
            // Gone since it was found: a reload watches again from where it is now. Else (a limit of watches
            // reached, no permission) the user is told: "watching" must not stand for a watch that is not there.
            if (codeOf(e) === "ENOENT") Queue.offerUnsafe(wake, undefined)
            else unwatched.set(dir, e instanceof Error ? e.message : String(e))
            return undefined
          }
        }),
        (watcher) => Effect.sync(() => watcher?.close())
      )
    }
    for (const [dir, why] of unwatched) {
      yield* Console.error(
        printable(`abhed-ext run: warning: cannot watch ${dir} (${why}): a change there is not seen, nothing reloads`)
      )
    }
    return new Set(unwatched.keys())
  })

const codeOf = (e: unknown): unknown => (typeof e === "object" && e !== null && "code" in e ? e.code : undefined)
