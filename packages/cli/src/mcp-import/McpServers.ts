import { posix } from "node:path"
import { looksLikeSecretName } from "@abhed/host/ExtensionEnvironment"
import { ExtensionNamePattern, isJsonObject, isReservedExtensionName, MaxTimerMs } from "@abhed/protocol"
import { readConfigText } from "@abhed/protocol/ConfigText"
import { Result } from "effect"
import type { HookFormat } from "../hook/HookFormat.ts"
import type { AdapterLaunch } from "../hook/HookConfig.ts"
import type { Skipped } from "../hook/HookSettings.ts"
import {
  braced,
  hasRefs,
  isVariableName,
  looksLikeSecretValue,
  onlyRef,
  type Piece,
  piecesOf,
  refsOf,
  secretQueryParameter,
  shellWord
} from "./McpReferences.ts"

/**
 * `import-mcp`: the MCP servers of a Claude Code or Gemini CLI file, and the `abhed.json` that runs each one through
 * the adapter, `abhed-ext mcp`. Pure: the caller reads the file and says how to start the adapter.
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
/** The adapter's `--name`: letters, digits, `_` and `-`, at most this long (so that its tools' names fit). */
const MaxServerName = 40

const geminiOnlyKeys = ["httpUrl", "cwd", "trust", "includeTools", "excludeTools", "timeout", "oauth", "authProviderType"]

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

/**
 * The file's text: Claude Code reads JSON; Gemini CLI strips comments first (a trailing comma is still an error), so
 * a Gemini file may have them, read with the line and column of each problem. The format is `format`, or told.
 */
export const parseMcpFile = (
  file: string | undefined,
  text: string,
  format: HookFormat | undefined
): Result.Result<{ readonly format: HookFormat; readonly settings: unknown }, string> => {
  let strictError: string
  try {
    const settings: unknown = JSON.parse(text)
    return Result.succeed({ format: format ?? detectFormat(file, settings), settings })
  } catch (e) {
    strictError = `not JSON: ${e instanceof Error ? e.message : String(e)}`
  }
  const read = readConfigText(text)
  const chosen = format ?? (read.value === undefined ? undefined : detectFormat(file, read.value))
  if (chosen !== "gemini") {
    const hint = format === undefined ? "; for a Gemini CLI file, give --format gemini" : ""
    return Result.fail(read.value === undefined ? strictError : `${strictError} (Claude Code reads its MCP files as plain JSON: no comments${hint})`)
  }
  const [problem] = read.problems
  if (problem === undefined) return Result.succeed({ format: chosen, settings: read.value })
  const { column, line } = read.where(problem.offset)
  const message = problem.message.startsWith("trailing comma")
    ? "trailing comma (Gemini CLI reads comments, not trailing commas): remove it"
    : problem.message
  return Result.fail(`not JSON with comments: line ${line}, column ${column}: ${message}`)
}

/** `mcpServers.NAME`, with the name quoted when it is not a plain word. */
const whereOf = (key: string): string => (/^[A-Za-z0-9_-]+$/.test(key) ? `mcpServers.${key}` : `mcpServers[${JSON.stringify(key)}]`)

const strings = (value: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined

/** Servers the file itself turned off, and why. */
const disabledBy = (format: HookFormat, settings: Record<string, unknown>): (key: string, entry: Record<string, unknown>) => string | undefined => {
  const mcp = isJsonObject(settings["mcp"]) ? settings["mcp"] : {}
  const excluded = format === "gemini" ? strings(mcp["excluded"]) ?? [] : []
  const allowed = format === "gemini" ? strings(mcp["allowed"]) : undefined
  const disabledJson = format === "claude" ? strings(settings["disabledMcpjsonServers"]) ?? [] : []
  return (key, entry) =>
    entry["disabled"] === true
      ? "disabled (\"disabled\": true)"
      : entry["enabled"] === false
      ? "disabled (\"enabled\": false)"
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
  const sse = "an SSE server (deprecated in MCP): the adapter speaks stdio and streamable HTTP; if the server also serves streamable HTTP, give that address"
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
      return { _tag: "Http", url, guessed: "it has a url and no \"type\": taken as streamable HTTP (\"type\": \"http\")" }
    }
    return { _tag: "None", why: type === "stdio" ? "a stdio server without a command" : "neither a command nor a url" }
  }
  if (type === "http") return typeof url === "string" ? { _tag: "Http", url } : { _tag: "None", why: "an http server without a url" }
  if (type === "sse") return { _tag: "None", why: `${sse} with "type": "http"` }
  return { _tag: "None", why: `transport ${JSON.stringify(type)} is not one the adapter speaks (stdio, http)` }
}

/** An HTTP header name (RFC 9110 token). */
const HeaderName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

const isSecretHeader = (name: string): boolean => looksLikeSecretName(name.replaceAll("-", "_")) || /auth|cookie/i.test(name)

/** A variable to hold a withheld header value: `GITHUB_AUTHORIZATION`. */
const headerVariable = (server: string, header: string): string =>
  `${server}_${header}`.toUpperCase().replace(/[^A-Z0-9_]+/g, "_").replace(/^([^A-Z_])/, "_$1")

/** A `timeout` in whole milliseconds the adapter accepts, and what changed. */
const timeoutOf = (timeout: unknown): { readonly ms: number; readonly adjusted?: string } => {
  if (typeof timeout !== "number" || !(timeout > 0)) return { ms: DefaultCallTimeoutMs }
  if (timeout > MaxCallTimeoutMs) return { ms: MaxCallTimeoutMs, adjusted: `its timeout of ${timeout} ms is longer than a timer can wait: clamped to ${MaxCallTimeoutMs} ms` }
  const ms = Math.round(timeout)
  return ms >= 1 ? { ms } : { ms: 1, adjusted: `its timeout of ${timeout} ms is under 1 ms: rounded up to 1 ms` }
}

interface Names {
  readonly taken: Set<string>
  /** Server names already made only of letters, digits, `_` and `-` (lower case): kept for their own server. */
  readonly verbatim: ReadonlySet<string>
}

/**
 * The adapter's `--name` (its tools are `mcp__NAME__TOOL`) and the extension's name. `--name` is the server's name
 * with every character outside letters, digits, `_` and `-` made `_`, as Claude Code names the tools (so a guard
 * written for Claude's `mcp__my_server__…` still matches). The extension's name is the same when it is a valid one,
 * else `mcp-` before it. Both unique, ignoring case (tool names are compared ignoring case): `_2`, `_3` after.
 */
const namesFor = (key: string, names: Names): { readonly mcpName: string; readonly extensionName: string } => {
  const base = key.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, MaxServerName) || "server"
  for (let n = 1;; n++) {
    const suffix = n === 1 ? "" : `_${n}`
    const mcpName = `${base.slice(0, MaxServerName - suffix.length)}${suffix}`
    const valid = ExtensionNamePattern.test(mcpName) && !isReservedExtensionName(mcpName)
    const extensionName = valid ? mcpName : `mcp-${mcpName}`
    if (names.taken.has(mcpName.toLowerCase()) || names.taken.has(extensionName.toLowerCase())) continue
    // `a.b` does not take `a_b` from a server of that name, wherever it is in the file.
    if (mcpName !== key && names.verbatim.has(mcpName.toLowerCase())) continue
    names.taken.add(mcpName.toLowerCase())
    names.taken.add(extensionName.toLowerCase())
    return { mcpName, extensionName }
  }
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

/** A string value of an object (`env`, `headers`): numbers and booleans as their text, as the peers read them. */
const textOf = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : undefined

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
  const passthrough = new Set<string>()
  const env: Record<string, string> = {}
  const adapterArgs: Array<string> = []
  let serverArgs: Array<string> = []
  let cwd: string | undefined

  if (transport._tag === "Stdio") {
    if (transport.command.trim() === "") return skip("a stdio server with a blank command")
    const args = entry["args"] === undefined ? [] : strings(entry["args"])
    if (args === undefined) return skip("args: expected an array of strings")
    const words = [transport.command, ...args].map((w) => piecesOf(format, w))
    const leaked = words.findIndex(looksLikeSecretValue)
    if (leaked !== -1) {
      return skip(
        `${leaked === 0 ? "command" : `args[${leaked - 1}]`} holds what looks like a credential: it is not copied into a ` +
          "config; put it in an environment variable and write ${VAR} in its place"
      )
    }
    // Assignments the shell makes before starting the server: a variable set from others, or from a mix of text and them.
    const exports: Array<readonly [string, ReadonlyArray<Piece>]> = []
    const given = entry["env"] ?? {}
    if (!isJsonObject(given)) return skip("env: expected an object of variables")
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
      if (looksLikeSecretValue(pieces) || (!hasRefs(pieces) && value !== "" && looksLikeSecretName(name))) {
        passthrough.add(name)
        warnings.push(
          `${at} holds a literal value, and it looks like a credential: it is not copied into the config; ` +
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
    if (exports.length > 0 || words.some(hasRefs)) {
      // The values are read when the server starts: sh expands the references, and `exec` leaves no shell behind.
      const assignments = exports.map(([name, pieces]) => `export ${name}=${shellWord(pieces)}; `).join("")
      serverArgs = ["sh", "-c", `${assignments}exec ${words.map(shellWord).join(" ")}`]
      for (const word of words) for (const ref of refsOf(word)) passthrough.add(ref)
    } else {
      serverArgs = [transport.command, ...args]
    }
    cwd = options.cwd
    const own = entry["cwd"]
    if (typeof own === "string" && own.trim() !== "") {
      if (hasRefs(piecesOf(format, own))) return skip(`cwd ${JSON.stringify(own)} holds a variable: write the folder out`)
      cwd = posix.isAbsolute(own) ? own : posix.normalize(posix.join(options.cwd, own))
    }
  } else {
    const url = transport.url
    const urlPieces = piecesOf(format, url)
    // The adapter reads the references when it starts; what is checked here is the text around them.
    const withRefs = (stand: string) => urlPieces.map((p) => (p._tag === "Text" ? p.text : stand)).join("")
    const placed = URL.parse(withRefs("x"))
    if (placed === null) return skip(`url ${JSON.stringify(url)} is not a URL`)
    if (placed.protocol !== "http:" && placed.protocol !== "https:") return skip(`url ${JSON.stringify(url)} is not http: or https:`)
    const literal = URL.parse(withRefs(""))
    if (looksLikeSecretValue(urlPieces) || (literal !== null && literal.password !== "")) {
      return skip("its url holds a password: it is not copied into a config; send it in a header, from a variable")
    }
    const query = secretQueryParameter(withRefs(""), looksLikeSecretName)
    if (query !== undefined) {
      return skip(`its url carries a credential in "${query}": it is not copied into a config; write \${VAR} in its place`)
    }
    for (const ref of refsOf(urlPieces)) passthrough.add(ref)
    adapterArgs.push(`--url=${braced(urlPieces)}`)
    const headers = entry["headers"] ?? {}
    if (!isJsonObject(headers)) return skip("headers: expected an object")
    const mcpNamePreview = key.replace(/[^A-Za-z0-9_-]/g, "_")
    for (const [name, raw] of Object.entries(headers)) {
      const at = `headers.${name}`
      const value = textOf(raw)
      if (value === undefined || !HeaderName.test(name) || /[\r\n\u0000]/.test(value)) {
        warnings.push(`${at}: not a valid header: left out`)
        continue
      }
      const pieces = piecesOf(format, value)
      if (looksLikeSecretValue(pieces) || (!hasRefs(pieces) && value !== "" && isSecretHeader(name))) {
        const variable = headerVariable(mcpNamePreview, name)
        const scheme = /^\s*(Bearer|Basic|token)\s+/i.exec(value)?.[0].trimStart() ?? ""
        passthrough.add(variable)
        adapterArgs.push(`--header=${name}:${scheme}\${${variable}}`)
        warnings.push(
          `${at} holds a literal credential: it is not copied into the config; it is sent as ` +
            `${JSON.stringify(`${scheme}\${${variable}}`)}, so export ${variable} (${scheme === "" ? "the whole value" : `the value after "${scheme.trim()}"`}) where you run abhed`
        )
        continue
      }
      for (const ref of refsOf(pieces)) passthrough.add(ref)
      adapterArgs.push(`--header=${name}:${braced(pieces)}`)
    }
  }

  const { extensionName, mcpName } = namesFor(key, names)
  const prefix = `mcp__${mcpName}__`
  if (mcpName !== key) {
    warnings.push(`its tools are named ${prefix}TOOL (the name made of letters, digits, _ and -, at most ${MaxServerName} characters, unique)`)
  }

  const timeout = timeoutOf(entry["timeout"])
  if (timeout.adjusted !== undefined) warnings.push(timeout.adjusted)
  // The adapter's bound on the server's start and the listing of its tools; the host's on that first exchange is above it.
  const startupMs = Math.max(StartupTimeoutMs, timeout.ms)

  const deny: Array<{ readonly tool: string; readonly reason: string }> = []
  if (format === "gemini") {
    if (entry["trust"] === true) {
      warnings.push("\"trust\": true is not carried over: an extension may veto, never permit; your guards and policy judge its calls")
    }
    if (entry["includeTools"] !== undefined) {
      warnings.push(
        `"includeTools" is not carried over: every tool of the server is offered; deny the others with policy rules on ${prefix}*`
      )
    }
    const excluded = strings(entry["excludeTools"])
    if (entry["excludeTools"] !== undefined && excluded === undefined) warnings.push("\"excludeTools\": expected an array of tool names: left out")
    for (const tool of excluded ?? []) {
      if (/^[A-Za-z0-9_-]+$/.test(tool) && (prefix + tool).length <= MaxToolName) {
        deny.push({ tool: prefix + tool, reason: `excluded by ${key}'s excludeTools` })
      } else {
        warnings.push(`excludeTools: ${JSON.stringify(tool)} is not a tool name this host can have: no rule written for it`)
      }
    }
    if (entry["oauth"] !== undefined || entry["authProviderType"] !== undefined) {
      warnings.push("its OAuth settings are not carried over: the adapter sends only the headers given")
    }
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
export const readMcpServers = (format: HookFormat, settings: unknown, options: ImportOptions): Result.Result<McpImport, string> => {
  if (!isJsonObject(settings)) return Result.fail("expected a JSON object (an .mcp.json or a settings.json)")
  const all = settings["mcpServers"]
  if (all === undefined) {
    return Result.fail(
      "no \"mcpServers\" in it: expected Claude Code's .mcp.json, or a Claude Code or Gemini CLI settings.json with \"mcpServers\"" +
        (isJsonObject(settings["projects"]) ? " (~/.claude.json keeps a project's servers under projects.PATH.mcpServers: give that object)" : "")
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
    verbatim: new Set(entries.map(([key]) => key).filter((key) => /^[A-Za-z0-9_-]+$/.test(key)).map((key) => key.toLowerCase()))
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
