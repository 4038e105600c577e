import { posix } from "node:path"
import { looksLikeSecretName } from "@abhed/host/ExtensionEnvironment"
import { isJsonObject } from "@abhed/protocol"
import { Result } from "effect"
import type { HookFormat } from "../hook/HookFormat.ts"
import { strings, textOf } from "./McpFile.ts"
import {
  hasLiteralDefault,
  hasRefs,
  isVariableName,
  looksLikeSecretValue,
  onlyRef,
  type Piece,
  piecesOf,
  refsOf,
  shellWord
} from "./McpReferences.ts"

/** What a stdio server's entry becomes: the server's command line after the adapter's `--`, its environment, its folder. */
export interface StdioServer {
  readonly serverArgs: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly passthrough: ReadonlySet<string>
  readonly cwd: string
  readonly warnings: ReadonlyArray<string>
}

/**
 * A stdio server's `command`, `args`, `env` and `cwd`, or why it is not carried over. References stay references
 * (`sh -c` expands them when the server starts); a literal credential is withheld and passed by name instead.
 * `projectCwd` is the project folder, relative to the config's: where a server without its own `cwd` runs.
 */
export const stdioServer = (
  format: HookFormat,
  command: string,
  entry: Record<string, unknown>,
  projectCwd: string
): Result.Result<StdioServer, string> => {
  const warnings: Array<string> = []
  const passthrough = new Set<string>()
  const env: Record<string, string> = {}
  if (command.trim() === "") return Result.fail("a stdio server with a blank command")
  const args = entry["args"] === undefined ? [] : strings(entry["args"])
  if (args === undefined) return Result.fail("args: expected an array of strings")
  const words = [command, ...args].map((w) => piecesOf(format, w))
  const leaked = words.findIndex(looksLikeSecretValue)
  if (leaked !== -1) {
    return Result.fail(
      `${leaked === 0 ? "command" : `args[${leaked - 1}]`} holds what looks like a credential: it is not copied into a ` +
        "config; put it in an environment variable and write ${VAR} in its place"
    )
  }
  // Assignments the shell makes before starting the server: a variable set from others, or from a mix of text and them.
  const exports: Array<readonly [string, ReadonlyArray<Piece>]> = []
  const given = entry["env"] ?? {}
  if (!isJsonObject(given)) return Result.fail("env: expected an object of variables")
  for (const [name, raw] of Object.entries(given)) {
    const at = `env.${name}`
    const value = textOf(raw)
    if (value === undefined) {
      warnings.push(`${at}: not a string: left out`)
      continue
    }
    if (name === "" || name.includes("=") || name.includes("\u0000")) {
      warnings.push(`${at}: not a variable name: left out`)
      continue
    }
    const pieces = piecesOf(format, value)
    // A default (`${VAR:-value}`) is a literal value too: under a credential's name it is withheld as one.
    const literal = !hasRefs(pieces) || hasLiteralDefault(pieces)
    if (looksLikeSecretValue(pieces) || (literal && value !== "" && looksLikeSecretName(name))) {
      passthrough.add(name)
      warnings.push(
        `${at} holds a literal value${hasRefs(pieces) ? " (a default)" : ""}, and it looks like a credential: it is not copied into the config; ` +
          `the server gets ${name} from the environment you run abhed in (env_passthrough), so export it there`
      )
      continue
    }
    if (!hasRefs(pieces)) {
      env[name] = value
      continue
    }
    for (const ref of refsOf(pieces)) passthrough.add(ref)
    const single = onlyRef(pieces)
    if (single !== undefined && single.name === name && single.fallback === undefined) continue
    if (!isVariableName(name)) {
      warnings.push(`${at}: ${JSON.stringify(value)} cannot be set by a shell under this name: left out`)
      continue
    }
    exports.push([name, pieces])
  }
  let serverArgs: Array<string>
  if (exports.length > 0 || words.some(hasRefs)) {
    // The values are read when the server starts: sh expands the references, and `exec` leaves no shell behind.
    const assignments = exports.map(([name, pieces]) => `export ${name}=${shellWord(pieces)}; `).join("")
    // A word without a reference is an argument of sh's own (`"${1}"` in the script), not text in it: trust counts
    // the files a command line names (`server.js`), and a script string names none.
    const plain = [command, ...args].filter((_, i) => !hasRefs(words[i] ?? []))
    let n = 0
    const line =
      plain.length === words.length
        ? '"$@"'
        : words.map((word) => (hasRefs(word) ? shellWord(word) : `"\${${++n}}"`)).join(" ")
    serverArgs = ["sh", "-c", `${assignments}exec ${line}`, "sh", ...plain]
    for (const word of words) for (const ref of refsOf(word)) passthrough.add(ref)
  } else {
    serverArgs = [command, ...args]
  }
  let cwd = projectCwd
  const own = entry["cwd"]
  if (typeof own === "string" && own.trim() !== "") {
    if (hasRefs(piecesOf(format, own)))
      return Result.fail(`cwd ${JSON.stringify(own)} holds a variable: write the folder out`)
    cwd = posix.isAbsolute(own) ? own : posix.normalize(posix.join(projectCwd, own))
  }
  return Result.succeed({ serverArgs, env, passthrough, cwd, warnings })
}
