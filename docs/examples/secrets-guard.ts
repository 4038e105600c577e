// secrets-guard: blocks read/write/edit of paths that look like secrets, and asks before `git push`.
// On before_agent_start it appends these rules to the system prompt.
//
//   node secrets-guard.ts ['**/.env' ...]        globs as arguments, or
//   SECRETS_GUARD_GLOBS='**/.env,**/*.key' node secrets-guard.ts
//
// Globs from argv win over the environment; with neither, DefaultGlobs apply. It matches the fields it means
// (`path` of file tools, `command` of bash), never the whole request line: a bash `description` that says
// "git push" is not a push.

import { Extension } from "@abhed/extension"
import * as Path from "node:path"

export const DefaultGlobs: ReadonlyArray<string> = [
  "**/.env",
  "**/.env.*",
  "**/*secret*",
  "**/*secret*/**",
  "**/.ssh/**",
  "**/*.pem",
  "**/id_rsa*"
]

const FileTools: ReadonlySet<string> = new Set(["read", "write", "edit"])

/**
 * The glob a path matches, if any. `./a/.env` and `a//.env` are normalized first so they cannot slip by, and
 * leading `../` segments are dropped: `**` never matches `..`, yet `../.env` is as secret as `.env`.
 */
export const matchingGlob = (path: string, globs: ReadonlyArray<string>): string | undefined => {
  const normalized = Path.posix.normalize(path.replaceAll("\\", "/")).replace(/^(\.\.\/)+/, "")
  return globs.find((glob) => Path.matchesGlob(normalized, glob))
}

// Words that run the next word as a command: `sudo git push` and `sandbox-run -- bash -c 'git push'` push too.
const Prefixes: ReadonlySet<string> = new Set([
  "sudo", "env", "time", "nice", "nohup", "exec", "command", "builtin", "xargs", "--",
  "bash", "sh", "zsh", "-c", "-lc", "sandbox-run"
])
const GitOptionsWithValue: ReadonlySet<string> = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace"])

/** Does any simple command in this shell text run `git push`? Quotes are dropped so wrapped commands count. */
export const runsGitPush = (command: string): boolean =>
  command
    .replaceAll(/['"`]/g, " ")
    .split(/&&|\|\||[;|&\n()]|\$\(/)
    .some((segment) => {
      const words = segment.trim().split(/\s+/).filter((w) => w !== "")
      let i = 0
      while (i < words.length && (Prefixes.has(words[i] ?? "") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] ?? ""))) i++
      if (words[i] !== "git" && !(words[i] ?? "").endsWith("/git")) return false
      for (i++; i < words.length; i++) {
        const word = words[i] ?? ""
        if (GitOptionsWithValue.has(word)) i++
        else if (!word.startsWith("-")) return word === "push"
      }
      return false
    })

const globsFrom = (argv: ReadonlyArray<string>, env: string | undefined): ReadonlyArray<string> => {
  if (argv.length > 0) return argv
  const fromEnv = (env ?? "").split(",").map((g) => g.trim()).filter((g) => g !== "")
  return fromEnv.length > 0 ? fromEnv : DefaultGlobs
}

export const handlers = (globs: ReadonlyArray<string>): Extension.Handlers => ({
  // Telling the model the rules up front saves it from proposing calls that will be blocked.
  before_agent_start: () => ({
    system: `Files matching ${globs.join(", ")} are off limits: do not read, write or edit them. ` +
      "git push needs the user's approval."
  }),
  tool_call: (req) => {
    if (FileTools.has(req.tool)) {
      for (const field of ["path", "file_path"]) {
        const path = req.args[field]
        const glob = typeof path === "string" ? matchingGlob(path, globs) : undefined
        if (glob !== undefined) return { block: true, reason: `${path} matches secret pattern ${glob}` }
      }
    }
    const command = req.args["command"]
    if (req.tool === "bash" && typeof command === "string" && runsGitPush(command)) {
      return { ask: true, reason: "git push publishes commits; confirm first" }
    }
    return {}
  }
})

if (import.meta.main) Extension.main(handlers(globsFrom(process.argv.slice(2), process.env["SECRETS_GUARD_GLOBS"])))
