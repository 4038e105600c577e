import { Result } from "effect"
import type { HookFormat } from "./HookFormat.ts"

/**
 * Tool names both ways between this host and a peer's hooks (docs/hooks.md). A name missing from the table is
 * passed through as it is, in both directions. `--tool-names bash=Bash,…` overrides single entries.
 */
export interface ToolNames {
  readonly toPeer: ReadonlyMap<string, string>
  readonly fromPeer: ReadonlyMap<string, string>
}

/** Claude Code's built-in tool names (its hooks match on them: `"matcher": "Bash"`). */
const claudeDefaults: Readonly<Record<string, string>> = {
  bash: "Bash",
  read: "Read",
  write: "Write",
  edit: "Edit",
  glob: "Glob",
  grep: "Grep"
}

/** Gemini CLI's built-in tool names (`run_shell_command`, `read_file`, …: its tools reference). */
const geminiDefaults: Readonly<Record<string, string>> = {
  bash: "run_shell_command",
  read: "read_file",
  write: "write_file",
  edit: "replace",
  glob: "glob",
  grep: "search_file_content"
}

export const defaultToolNames = (format: HookFormat): Readonly<Record<string, string>> =>
  format === "claude" ? claudeDefaults : geminiDefaults

/** `bash=Bash,read=Read`: ours=peer pairs, comma-separated. Errors name the bad entry. */
export const parseToolNames = (spec: string): Result.Result<Readonly<Record<string, string>>, string> => {
  const out: Record<string, string> = {}
  for (const entry of spec.split(",")) {
    const trimmed = entry.trim()
    if (trimmed === "") continue
    const eq = trimmed.indexOf("=")
    const ours = eq < 0 ? "" : trimmed.slice(0, eq).trim()
    const peer = eq < 0 ? "" : trimmed.slice(eq + 1).trim()
    if (ours === "" || peer === "") {
      return Result.fail(`--tool-names: "${trimmed}" is not ours=peer (e.g. bash=Bash)`)
    }
    out[ours] = peer
  }
  return Result.succeed(out)
}

/** The defaults of `format` with `overrides` (ours → peer) applied over them. */
export const toolNames = (format: HookFormat, overrides: Readonly<Record<string, string>> = {}): ToolNames => {
  const merged = { ...defaultToolNames(format), ...overrides }
  const toPeer = new Map(Object.entries(merged))
  const fromPeer = new Map<string, string>()
  for (const [ours, peer] of toPeer) if (!fromPeer.has(peer)) fromPeer.set(peer, ours)
  return { toPeer, fromPeer }
}

export const peerToolName = (names: ToolNames, ours: string): string => names.toPeer.get(ours) ?? ours
export const ourToolName = (names: ToolNames, peer: string): string => names.fromPeer.get(peer) ?? peer

/**
 * The peers' file tools name their path `file_path` (Claude's Read/Write/Edit; Gemini's read_file, write_file,
 * replace); ours call it `path`. A hook that guards `.tool_input.file_path` must see it, so `path` is renamed on
 * the way out and back on the way in.
 *
 * The hook must judge what runs, and what runs is `path`: when the call has `path`, the hook's `file_path` is that
 * `path`, and a `file_path` the call carries beside it is not shown (a model could put `README.md` there to have
 * `config/.env` judged as README.md). On the way back the hook's `file_path` is the path to run, even when its
 * rewrite also carries a `path` (a name the hook was never shown): the args come back with `path` only.
 */
const filePathTools: ReadonlySet<string> = new Set([
  "Read",
  "Write",
  "Edit",
  "MultiEdit",
  "read_file",
  "write_file",
  "replace"
])

const renamesPath = (peerTool: string, args: Readonly<Record<string, unknown>>): boolean =>
  filePathTools.has(peerTool) && Object.hasOwn(args, "path")

/** `args` with `from` renamed to `to` (in its place), and any `to` they already had dropped. */
const rename = (args: Readonly<Record<string, unknown>>, from: string, to: string): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(args)
      .filter(([k]) => k !== to)
      .map(([k, v]) => [k === from ? to : k, v])
  )

/** Our args as the peer's hook sees them (`tool_input`). */
export const argsToPeer = (peerTool: string, args: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  renamesPath(peerTool, args) ? rename(args, "path", "file_path") : { ...args }

/** A hook's rewritten `tool_input` back in our shape, given the args the call had (`original`). */
export const argsFromPeer = (
  peerTool: string,
  peerArgs: Readonly<Record<string, unknown>>,
  original: Readonly<Record<string, unknown>>
): Record<string, unknown> =>
  renamesPath(peerTool, original) && Object.hasOwn(peerArgs, "file_path")
    ? rename(peerArgs, "file_path", "path")
    : { ...peerArgs }
