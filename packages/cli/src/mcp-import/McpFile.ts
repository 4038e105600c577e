import { posix } from "node:path"
import { isJsonObject } from "@abhed/protocol"
import { Result } from "effect"
import type { HookFormat } from "../hook/HookFormat.ts"
import { parsePeerFile } from "../PeerFileText.ts"

/**
 * `import-mcp`'s input: a peer's file, whose it is, and its values as the peer reads them.
 *
 * The formats, from the peers' documentation:
 * - Claude Code (code.claude.com/docs/en/mcp, "Project scope" and "Environment variable expansion in .mcp.json"):
 *   `{"mcpServers": {"NAME": {"type": "stdio", "command", "args", "env"} | {"type": "http" | "sse", "url",
 *   "headers"}}}`, in `.mcp.json`, in `~/.claude.json`, or in a settings.json; a settings.json's
 *   `disabledMcpjsonServers` lists servers it turned off. Its tools are `mcp__NAME__TOOL`.
 * - Gemini CLI (geminicli.com/docs/tools/mcp-server, "Configuration Properties"): `mcpServers` in settings.json, each
 *   with one of `command` (stdio, with `args`, `env`, `cwd`), `httpUrl` (streamable HTTP) or `url` (SSE), and
 *   `headers`, `timeout` (ms), `trust`, `includeTools`, `excludeTools`; the settings' `mcp.allowed` and
 *   `mcp.excluded` name the servers it may connect to, and those it skips.
 */

const geminiOnlyKeys = [
  "httpUrl",
  "cwd",
  "trust",
  "includeTools",
  "excludeTools",
  "timeout",
  "oauth",
  "authProviderType"
]

/** Whose file this is: told by where it lives, else by keys only Gemini CLI has (Claude's when nothing tells). */
export const detectFormat = (file: string | undefined, settings: unknown): HookFormat => {
  const dir = file === undefined ? "" : posix.basename(posix.dirname(file.replaceAll("\\", "/")))
  if (dir === ".gemini") return "gemini"
  if (dir === ".claude" || (file !== undefined && posix.basename(file) === ".mcp.json")) return "claude"
  if (!isJsonObject(settings)) return "claude"
  if (isJsonObject(settings["mcp"])) return "gemini"
  const servers = isJsonObject(settings["mcpServers"]) ? Object.values(settings["mcpServers"]) : []
  return servers.some((s) => isJsonObject(s) && geminiOnlyKeys.some((k) => s[k] !== undefined)) ? "gemini" : "claude"
}

/** The file's text, read as its CLI reads it (PeerFileText.ts); the format is `format`, or told. */
export const parseMcpFile = (
  file: string | undefined,
  text: string,
  format: HookFormat | undefined
): Result.Result<{ readonly format: HookFormat; readonly settings: unknown }, string> =>
  parsePeerFile(
    text,
    format,
    (settings) => detectFormat(file, settings),
    `Claude Code reads its MCP files as plain JSON: no comments${format === undefined ? "; for a Gemini CLI file, give --format gemini" : ""}`
  )

/** An array of strings, or undefined when it is anything else. */
export const strings = (value: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined

/** A string value of an object (`env`, `headers`): numbers and booleans as their text, as the peers read them. */
export const textOf = (value: unknown): string | undefined =>
  typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "boolean"
      ? String(value)
      : undefined
