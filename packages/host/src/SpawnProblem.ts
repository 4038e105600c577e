import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * What to do about a program that could not be started: Node says only `spawn ./guard.sh EACCES`, which names the
 * errno, not the mistake (a script without its executable bit, a program not installed or misspelt).
 */

/** The errno code of an error, or of the error it wraps (effect's PlatformError keeps Node's as its `cause`). */
const codeOf = (error: unknown): string | undefined => {
  let current = error
  for (let depth = 0; depth < 3 && typeof current === "object" && current !== null; depth++) {
    if ("code" in current && typeof current.code === "string") return current.code
    current = "cause" in current ? current.cause : undefined
  }
  return undefined
}

/** The interpreter a script's name suggests, for the hint. */
const interpreterFor = (command: string): string =>
  /\.py$/.test(command) ? "python3" : /\.[cm]?[jt]s$/.test(command) ? "node" : "bash"

/** What `name` is in `cwd`, if anything: a script named without `./` is looked up on PATH, not there. */
const kindIn = (cwd: string | undefined, name: string): "file" | "folder" | undefined => {
  try {
    const stats = NodeFs.statSync(NodePath.resolve(cwd ?? ".", name))
    return stats.isFile() ? "file" : stats.isDirectory() ? "folder" : undefined
  } catch {
    return undefined
  }
}

/**
 * The hint for a failed start of `command` in `cwd`, after the error's own text; empty when there is nothing more to
 * say.
 */
export const spawnHint = (command: string, error: unknown, cwd?: string): string => {
  const words = command.trim().split(/\s+/)
  switch (codeOf(error)) {
    case "ENOENT":
      // `"command": "python3 guard.py"`: a command line where one program was meant. No shell splits it.
      if (words.length > 1 && kindIn(cwd, command) === undefined) {
        return (
          ` (no program is named so: "command" is one program, not a command line; its arguments go in "args": ` +
          `"command": ${JSON.stringify(words[0])}, "args": ${JSON.stringify(words.slice(1))})`
        )
      }
      return command.includes("/")
        ? " (no such file: a relative path resolves against the working directory, the extension's cwd)"
        : cwd !== undefined && kindIn(cwd, command) === "file"
          ? ` (not on PATH; ${command} is a file in the working directory: name it ./${command}, or start it ` +
            `through its interpreter: ${interpreterFor(command)} ${command})`
          : " (no such program on PATH: is it installed?)"
    case "EACCES":
      if (command.includes("/") && kindIn(cwd, command) === "folder") return " (a folder, not a program)"
      return (
        " (permission denied: not an executable file: `chmod +x` a script that starts with #!, or start it through " +
        `its interpreter: ${interpreterFor(command)} ${command})`
      )
    default:
      return ""
  }
}

/** The error's text with the hint: what a failed start of `command` in `cwd` reports. */
export const describeSpawnError = (command: string, error: unknown, cwd?: string): string =>
  `${error instanceof Error ? error.message : String(error)}${spawnHint(command, error, cwd)}`
