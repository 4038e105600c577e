import { isJsonObject, MaxTimerMs } from "@abhed/protocol"
import { Result } from "effect"
import type { HookFormat } from "../hook/HookFormat.ts"
import type { AdapterLaunch } from "../hook/HookConfig.ts"
import type { Skipped } from "../hook/HookSettings.ts"
import { strings } from "./McpFile.ts"
import { httpServer } from "./McpHttpServer.ts"
import { MaxServerName, type Names, namesFor } from "./McpServerNames.ts"
import { stdioServer } from "./McpStdioServer.ts"

/**
 * `import-mcp`: the MCP servers of a Claude Code or Gemini CLI file, and the `abhed.json` that runs each one through
 * the adapter, `abhed-ext mcp`. Pure: the caller reads the file and says how to start the adapter.
 */

export interface McpImport {
  readonly format: HookFormat
  /** Entries in `mcpServers`, carried over or not. */
  readonly servers: number
  readonly extensions: ReadonlyArray<Record<string, unknown>>
  /** Where each extension comes from, in the same order: `mcpServers.NAME`. */
  readonly sources: ReadonlyArray<string>
  /** Policy deny rules: a Gemini server's `excludeTools`. */
  readonly deny: ReadonlyArray<{ readonly tool: string; readonly reason: string }>
  readonly skipped: ReadonlyArray<Skipped>
  /** Carried over, but not all of it, or not as written: what differs. */
  readonly warnings: ReadonlyArray<Skipped>
}

export interface ImportOptions {
  readonly launch: AdapterLaunch
  /** Write a stdio server as an MCP server the host speaks to itself (`"protocol": "mcp"`), not through the adapter. */
  readonly inHost?: boolean | undefined
  /** The project folder, relative to the config file's folder: where a stdio server runs. */
  readonly cwd: string
}

/** How long one tool call may take when the file sets no `timeout` (Gemini's default is 10 minutes, Claude's longer). */
export const DefaultCallTimeoutMs = 60_000
/** Slack between the adapter's bound on a call and the extension's `timeout_ms`: the adapter answers first. */
const ExtensionSlackMs = 1000
/** The server's start (`npx` may download it first) and the listing of its tools: at least this long. */
const StartupTimeoutMs = 60_000
/** The longest `--timeout-ms` written: `timeout_ms` and `startup_timeout_ms` stay within what a timer can wait. */
export const MaxCallTimeoutMs = MaxTimerMs - 5 * ExtensionSlackMs
/** Tool names are at most 64 characters (`^[A-Za-z0-9_-]{1,64}$`), and the adapter's are `mcp__NAME__TOOL`. */
const MaxToolName = 64

/** The `timeout_ms` whose four fifths (the host's bound on an MCP call) is at least `ms`, within what a timer can wait. */
const inHostTimeout = (ms: number): number => Math.min(MaxTimerMs, Math.ceil((ms * 5) / 4))

/** `mcpServers.NAME`, with the name quoted when it is not a plain word. */
const whereOf = (key: string): string =>
  /^[A-Za-z0-9_-]+$/.test(key) ? `mcpServers.${key}` : `mcpServers[${JSON.stringify(key)}]`

/** Servers the file itself turned off, and why. */
const disabledBy = (
  format: HookFormat,
  settings: Record<string, unknown>
): ((key: string, entry: Record<string, unknown>) => string | undefined) => {
  const mcp = isJsonObject(settings["mcp"]) ? settings["mcp"] : {}
  const excluded = format === "gemini" ? (strings(mcp["excluded"]) ?? []) : []
  const allowed = format === "gemini" ? strings(mcp["allowed"]) : undefined
  const disabledJson = format === "claude" ? (strings(settings["disabledMcpjsonServers"]) ?? []) : []
  return (key, entry) =>
    entry["disabled"] === true
      ? 'disabled ("disabled": true)'
      : entry["enabled"] === false
        ? 'disabled ("enabled": false)'
        : excluded.includes(key)
          ? "disabled (listed in mcp.excluded)"
          : allowed !== undefined && !allowed.includes(key)
            ? "disabled (not listed in mcp.allowed)"
            : disabledJson.includes(key)
              ? "disabled (listed in disabledMcpjsonServers)"
              : undefined
}

type Transport =
  | { readonly _tag: "Stdio"; readonly command: string }
  | { readonly _tag: "Http"; readonly url: string; readonly guessed?: string }
  | { readonly _tag: "None"; readonly why: string }

/** The transport an entry asks for, as its peer picks it. The adapter speaks stdio and streamable HTTP. */
const transportOf = (format: HookFormat, entry: Record<string, unknown>): Transport => {
  const { command, httpUrl, type, url } = entry
  const sse =
    "an SSE server (deprecated in MCP): the adapter speaks stdio and streamable HTTP; if the server also serves streamable HTTP, give that address"
  if (format === "gemini") {
    if (typeof httpUrl === "string") return { _tag: "Http", url: httpUrl }
    if (typeof url === "string") {
      return type === "http" ? { _tag: "Http", url } : { _tag: "None", why: `${sse} as "httpUrl"` }
    }
    if (typeof command === "string") return { _tag: "Stdio", command }
    return { _tag: "None", why: "none of command, httpUrl or url" }
  }
  if (type === undefined || type === "stdio") {
    if (typeof command === "string") return { _tag: "Stdio", command }
    if (type === undefined && typeof url === "string") {
      return { _tag: "Http", url, guessed: 'it has a url and no "type": taken as streamable HTTP ("type": "http")' }
    }
    return { _tag: "None", why: type === "stdio" ? "a stdio server without a command" : "neither a command nor a url" }
  }
  if (type === "http")
    return typeof url === "string" ? { _tag: "Http", url } : { _tag: "None", why: "an http server without a url" }
  if (type === "sse") return { _tag: "None", why: `${sse} with "type": "http"` }
  return { _tag: "None", why: `transport ${JSON.stringify(type)} is not one the adapter speaks (stdio, http)` }
}

/** A `timeout` in whole milliseconds the adapter accepts, and what changed. */
const timeoutOf = (timeout: unknown): { readonly ms: number; readonly adjusted?: string } => {
  if (typeof timeout !== "number" || !(timeout > 0)) return { ms: DefaultCallTimeoutMs }
  if (timeout > MaxCallTimeoutMs)
    return {
      ms: MaxCallTimeoutMs,
      adjusted: `its timeout of ${timeout} ms is longer than a timer can wait: clamped to ${MaxCallTimeoutMs} ms`
    }
  const ms = Math.round(timeout)
  return ms >= 1 ? { ms } : { ms: 1, adjusted: `its timeout of ${timeout} ms is under 1 ms: rounded up to 1 ms` }
}

type Outcome =
  | { readonly _tag: "Skip"; readonly why: string }
  | {
      readonly _tag: "Server"
      readonly extension: Record<string, unknown>
      readonly deny: ReadonlyArray<{ readonly tool: string; readonly reason: string }>
      readonly warnings: ReadonlyArray<string>
    }

const skip = (why: string): Outcome => ({ _tag: "Skip", why })

const serverOf = (
  format: HookFormat,
  key: string,
  entry: Record<string, unknown>,
  options: ImportOptions,
  names: Names
): Outcome => {
  const transport = transportOf(format, entry)
  if (transport._tag === "None") return skip(transport.why)
  const warnings: Array<string> = []
  if (transport._tag === "Http" && transport.guessed !== undefined) warnings.push(transport.guessed)
  const stdio = transport._tag === "Stdio" ? stdioServer(format, transport.command, entry, options.cwd) : undefined
  const http = transport._tag === "Http" ? httpServer(format, key, transport.url, entry) : undefined
  if (stdio !== undefined && Result.isFailure(stdio)) return skip(stdio.failure)
  if (http !== undefined && Result.isFailure(http)) return skip(http.failure)
  const server = stdio?.success
  const adapterArgs = http?.success.adapterArgs ?? []
  const serverArgs = server?.serverArgs ?? []
  const env = server?.env ?? {}
  const cwd = server?.cwd
  const passthrough = new Set([...(server?.passthrough ?? []), ...(http?.success.passthrough ?? [])])
  warnings.push(...(server?.warnings ?? []), ...(http?.success.warnings ?? []))

  const { extensionName, mcpName } = namesFor(key, names)
  const prefix = `mcp__${mcpName}__`
  if (mcpName !== key) {
    warnings.push(
      `its tools are named ${prefix}TOOL (the name made of letters, digits, _ and -, at most ${MaxServerName} characters, unique)`
    )
  }

  const timeout = timeoutOf(entry["timeout"])
  if (timeout.adjusted !== undefined) warnings.push(timeout.adjusted)
  // The adapter's bound on the server's start and the listing of its tools; the host's on that first exchange is above it.
  const startupMs = Math.max(StartupTimeoutMs, timeout.ms)

  const deny: Array<{ readonly tool: string; readonly reason: string }> = []
  if (format === "gemini") {
    if (entry["trust"] === true) {
      warnings.push(
        '"trust": true is not carried over: an extension may veto, never permit; your guards and policy judge its calls'
      )
    }
    if (entry["includeTools"] !== undefined) {
      warnings.push(
        `"includeTools" is not carried over: every tool of the server is offered; deny the others with policy rules on ${prefix}*`
      )
    }
    const excluded = strings(entry["excludeTools"])
    if (entry["excludeTools"] !== undefined && excluded === undefined)
      warnings.push('"excludeTools": expected an array of tool names: left out')
    for (const tool of excluded ?? []) {
      if (/^[A-Za-z0-9_-]+$/.test(tool) && (prefix + tool).length <= MaxToolName) {
        deny.push({ tool: prefix + tool, reason: `excluded by ${key}'s excludeTools` })
      } else {
        warnings.push(
          `excludeTools: ${JSON.stringify(tool)} is not a tool name this host can have: no rule written for it`
        )
      }
    }
    if (entry["oauth"] !== undefined || entry["authProviderType"] !== undefined) {
      warnings.push("its OAuth settings are not carried over: the adapter sends only the headers given")
    }
  }

  if (options.inHost === true) {
    const [command, ...args] = serverArgs
    // The host's MCP extension prefixes tools with its extension's name: a reserved name keeps the adapter.
    if (command !== undefined && extensionName === mcpName) {
      const extension: Record<string, unknown> = {
        name: mcpName,
        command,
        args,
        protocol: "mcp",
        ...(cwd === undefined ? {} : { cwd }),
        ...(Object.keys(env).length === 0 ? {} : { env }),
        ...(passthrough.size === 0 ? {} : { env_passthrough: [...passthrough] }),
        // The host bounds a call at four fifths of timeout_ms: the file's timeout is that bound.
        timeout_ms: inHostTimeout(timeout.ms),
        startup_timeout_ms: inHostTimeout(startupMs)
      }
      return { _tag: "Server", extension, deny, warnings }
    }
    warnings.push(
      command === undefined
        ? "an HTTP server goes through the adapter (the host speaks MCP over stdio only)"
        : `it goes through the adapter: the host would name its tools mcp__${extensionName}__TOOL`
    )
  }

  const extension: Record<string, unknown> = {
    name: extensionName,
    command: options.launch.command,
    args: [
      ...options.launch.args,
      "mcp",
      `--name=${mcpName}`,
      `--timeout-ms=${timeout.ms}`,
      `--startup-timeout-ms=${startupMs}`,
      ...adapterArgs,
      ...(serverArgs.length > 0 ? ["--", ...serverArgs] : [])
    ],
    events: ["list_tools", "invoke_tool"],
    ...(cwd === undefined ? {} : { cwd }),
    ...(Object.keys(env).length === 0 ? {} : { env }),
    ...(passthrough.size === 0 ? {} : { env_passthrough: [...passthrough] }),
    timeout_ms: timeout.ms + ExtensionSlackMs,
    startup_timeout_ms: startupMs + 5 * ExtensionSlackMs
  }
  return { _tag: "Server", extension, deny, warnings }
}

/** Every server of the file as an adapter extension, and every entry that cannot be carried over, with the reason. */
export const readMcpServers = (
  format: HookFormat,
  settings: unknown,
  options: ImportOptions
): Result.Result<McpImport, string> => {
  if (!isJsonObject(settings)) return Result.fail("expected a JSON object (an .mcp.json or a settings.json)")
  const all = settings["mcpServers"]
  if (all === undefined) {
    return Result.fail(
      'no "mcpServers" in it: expected Claude Code\'s .mcp.json, or a Claude Code or Gemini CLI settings.json with "mcpServers"' +
        (isJsonObject(settings["projects"])
          ? " (~/.claude.json keeps a project's servers under projects.PATH.mcpServers: give that object)"
          : "")
    )
  }
  if (!isJsonObject(all)) return Result.fail("mcpServers: expected an object of servers, by name")
  const disabled = disabledBy(format, settings)
  const extensions: Array<Record<string, unknown>> = []
  const sources: Array<string> = []
  const deny: Array<{ readonly tool: string; readonly reason: string }> = []
  const skipped: Array<Skipped> = []
  const warnings: Array<Skipped> = []
  const entries = Object.entries(all)
  const names: Names = {
    taken: new Set(),
    verbatim: new Set(
      entries
        .map(([key]) => key)
        .filter((key) => /^[A-Za-z0-9_-]+$/.test(key))
        .map((key) => key.toLowerCase())
    )
  }
  for (const [key, entry] of entries) {
    const where = whereOf(key)
    if (!isJsonObject(entry)) {
      skipped.push({ where, why: "expected an object" })
      continue
    }
    const off = disabled(key, entry)
    if (off !== undefined) {
      skipped.push({ where, why: off })
      continue
    }
    const outcome = serverOf(format, key, entry, options, names)
    if (outcome._tag === "Skip") {
      skipped.push({ where, why: outcome.why })
      continue
    }
    extensions.push(outcome.extension)
    sources.push(where)
    deny.push(...outcome.deny)
    for (const why of outcome.warnings) warnings.push({ where, why })
  }
  return Result.succeed({ format, servers: entries.length, extensions, sources, deny, skipped, warnings })
}
