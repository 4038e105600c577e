import { basename } from "node:path"
import { Result } from "effect"
import { ServerNamePattern } from "@abhed/host/mcp/McpToolNames"

/**
 * Where the adapter finds its MCP server, from its command line: a command it starts (stdio) or a URL (streamable
 * HTTP). Pure: the environment is passed in.
 */

export type McpTarget =
  | { readonly _tag: "Stdio"; readonly command: string; readonly args: ReadonlyArray<string> }
  | { readonly _tag: "Http"; readonly url: string; readonly headers: Readonly<Record<string, string>> }

export interface McpArgs {
  readonly name: string | undefined
  readonly url: string | undefined
  readonly headers: ReadonlyArray<string>
  readonly command: string | undefined
  readonly args: ReadonlyArray<string>
}

type Env = Readonly<Record<string, string | undefined>>

/**
 * `${VAR}` and `${VAR:-default}` in a header value or the URL, from the adapter's environment (as `.mcp.json`
 * writes them): a token stays out of the config and reaches the adapter by `env_passthrough`. An unset variable
 * without a default is an error naming it, never an empty token sent.
 */
export const expand = (text: string, env: Env, where: string): Result.Result<string, string> => {
  const missing: Array<string> = []
  const out = text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_, name: string, fallback: string | undefined) => {
      const value = env[name]
      if (value !== undefined && value !== "") return value
      if (fallback !== undefined) return fallback
      missing.push(name)
      return ""
    }
  )
  return missing.length === 0
    ? Result.succeed(out)
    : Result.fail(`${where}: \${${missing[0]}} is not set (pass it to the extension with env_passthrough or env)`)
}

/** The server's name when `--name` is not given: its command's file name, made to fit (`mcp-server-git` → itself). */
const defaultName = (command: string): string =>
  basename(command)
    .replace(/\.(c|m)?[jt]s$/, "")
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .slice(0, 40)

/** The target and the server's name from the parsed command line, or what is wrong with it. */
export const parseTarget = (
  parsed: McpArgs,
  env: Env
): Result.Result<{ readonly name: string; readonly target: McpTarget }, string> => {
  if (parsed.url !== undefined) {
    if (parsed.command !== undefined) return Result.fail("give either --url or a command after --, not both")
    if (parsed.name === undefined) return Result.fail("--url needs --name (the tools are declared as mcp__NAME__TOOL)")
    const url = expand(parsed.url, env, "--url")
    if (Result.isFailure(url)) return Result.fail(url.failure)
    if (!URL.canParse(url.success) || !/^https?:$/.test(new URL(url.success).protocol)) {
      return Result.fail("--url: not an http:// or https:// URL")
    }
    // fetch refuses a URL with user info, and a credential belongs in a header (`--header`, from a variable).
    const { password, username } = new URL(url.success)
    if (username !== "" || password !== "") {
      return Result.fail("--url: holds a user name or password (user:password@); send the credential with --header")
    }
    const headers: Record<string, string> = {}
    for (const header of parsed.headers) {
      const colon = header.indexOf(":")
      const key = colon === -1 ? "" : header.slice(0, colon).trim()
      if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(key)) {
        return Result.fail(
          `--header: expected NAME:VALUE with a header name before the colon, got a value of ${header.length} characters`
        )
      }
      const value = expand(header.slice(colon + 1).trim(), env, `--header ${key}`)
      if (Result.isFailure(value)) return Result.fail(value.failure)
      headers[key] = value.success
    }
    return checkName(parsed.name, { _tag: "Http", url: url.success, headers })
  }
  if (parsed.headers.length > 0) return Result.fail("--header goes with --url")
  if (parsed.command === undefined || parsed.command === "") {
    return Result.fail("give the MCP server's command after -- (or --url and --name for an HTTP server)")
  }
  return checkName(parsed.name ?? defaultName(parsed.command), {
    _tag: "Stdio",
    command: parsed.command,
    args: parsed.args
  })
}

const checkName = (name: string, target: McpTarget) =>
  ServerNamePattern.test(name)
    ? Result.succeed({ name, target })
    : Result.fail(`--name: ${JSON.stringify(name)} must be letters, digits, _ and - only, 1 to 40 characters`)
