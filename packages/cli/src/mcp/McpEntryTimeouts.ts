import { basename } from "node:path"
import type { ExtensionConfig } from "@abhed/protocol"
import { DefaultMcpTimeoutMs } from "./McpFlags.ts"

/**
 * An `abhed-ext mcp` entry whose bounds are not below its extension's (docs/mcp.md): a call, or the server's start,
 * that slow is timed out by the host, which kills the adapter, and every tool of its server with it, where the
 * adapter would have answered that one call failed. Said by `run` when it starts. Pure, and no parser loaded: the
 * entry's args are scanned for the two flags alone.
 */

/** The CLI before `mcp` in an entry's command line: `abhed-ext`, or node running its script. */
const isCli = (word: string): boolean => /^abhed-ext(\.[cm]?js)?$|^bin\.([cm]?js|ts)$/.test(basename(word))

/** `--flag N` or `--flag=N` among `words`, up to `--`. */
const flagValue = (words: ReadonlyArray<string>, flag: string): number | undefined => {
  for (let i = 0; i < words.length && words[i] !== "--"; i++) {
    const word = words[i] ?? ""
    const value = word === flag ? words[i + 1] : word.startsWith(`${flag}=`) ? word.slice(flag.length + 1) : undefined
    if (value !== undefined && /^\d+$/.test(value)) return Number(value)
  }
  return undefined
}

/** The warnings for `extensions`, one per bound past its extension's. */
export const mcpEntryWarnings = (
  extensions: ReadonlyArray<
    Pick<ExtensionConfig, "name" | "command" | "args" | "protocol" | "timeout_ms" | "startup_timeout_ms">
  >
): ReadonlyArray<string> =>
  extensions.flatMap((extension) => {
    if (extension.protocol === "mcp") return []
    const words = [extension.command, ...extension.args]
    const at = words.findIndex((word, i) => word === "mcp" && i > 0 && isCli(words[i - 1] ?? ""))
    if (at === -1) return []
    const flags = words.slice(at + 1)
    const call = flagValue(flags, "--timeout-ms") ?? DefaultMcpTimeoutMs
    const start = flagValue(flags, "--startup-timeout-ms") ?? call
    const past = (flag: string, ms: number, setting: string, limit: number) =>
      ms < limit
        ? []
        : [
            `extension ${extension.name}: its abhed-ext mcp ${flag} ${ms} is not below its ${setting} ${limit}: the host ` +
              `would time out the adapter first, and every tool of its server would go with it; give ${setting} above ${ms}`
          ]
    return [
      ...past("--timeout-ms", call, "timeout_ms", extension.timeout_ms),
      ...past("--startup-timeout-ms", start, "startup_timeout_ms", extension.startup_timeout_ms)
    ]
  })
