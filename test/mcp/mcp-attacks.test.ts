import { type McpArgs, parseTarget } from "@abhed/cli/mcp/McpTarget"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { readMcpServers } from "../../packages/cli/src/mcp-import/McpServers.ts"

/**
 * Attacks on bringing MCP servers under the guards: hostile peer settings given to `import-mcp` (credentials hidden
 * in a `${VAR:-default}` or in a URL's user info), and a server that tries to reach the client's calls without a
 * judgment (mcp-attacks-session below).
 */

const launch = { command: "abhed-ext", args: [] }

const imported = (servers: Record<string, unknown>) => {
  const result = readMcpServers("claude", { mcpServers: servers }, { launch, cwd: "." })
  if (Result.isFailure(result)) throw new Error(result.failure)
  return result.success
}

describe("import-mcp with hostile settings", () => {
  it("a credential as a ${VAR:-default} is withheld like a literal one: env, header, url query and args", () => {
    const result = imported({
      env: {
        command: "srv",
        env: {
          GITHUB_TOKEN: "${GITHUB_TOKEN:-hunter2-in-env}",
          OTHER: "${OTHER_VAR:-ghp_abcdefghijklmnopqrstuvwxyz0123456789}",
          MODE: "${MODE:-fast}"
        }
      },
      head: {
        type: "http",
        url: "https://api.example.com/mcp",
        headers: { Authorization: "Bearer ${API_TOKEN:-hunter2-in-header}", "X-Region": "${REGION:-eu}" }
      },
      query: { type: "http", url: "https://api.example.com/mcp?api_key=${KEY:-hunter2-in-query}" },
      args: { command: "srv", args: ["--token=${T:-sk-abcdefghijklmnopqrstuvwxyz}"] }
    })
    const written = JSON.stringify(result.extensions)
    for (const secret of ["hunter2", "ghp_abcdefghij", "sk-abcdefghij"]) expect(written).not.toContain(secret)
    const [env, head] = result.extensions
    // MODE's default is no credential: it stays, read by sh when the server starts.
    expect(env?.["args"]).toContain('export MODE="${MODE:-fast}"; exec srv')
    expect(env?.["env_passthrough"]).toEqual(["GITHUB_TOKEN", "OTHER", "MODE"])
    expect(head?.["args"]).toEqual([
      "mcp",
      "--name=head",
      "--timeout-ms=60000",
      "--startup-timeout-ms=60000",
      "--url=https://api.example.com/mcp",
      "--header=Authorization:Bearer ${HEAD_AUTHORIZATION}",
      "--header=X-Region:${REGION:-eu}"
    ])
    expect(result.skipped.map((s) => s.where)).toEqual(["mcpServers.query", "mcpServers.args"])
    expect(result.skipped[0]?.why).toContain('carries a credential in "api_key"')
    expect(result.skipped[1]?.why).toContain("args[0] holds what looks like a credential")
    expect(result.warnings.map((w) => w.why.split(":")[0])).toEqual([
      "env.GITHUB_TOKEN holds a literal value (a default), and it looks like a credential",
      "env.OTHER holds a literal value (a default), and it looks like a credential",
      "headers.Authorization holds a literal credential"
    ])
  })

  it("a url with user info (a token as the user name, or a reference there) is not carried over", () => {
    const result = imported({
      token: { type: "http", url: "https://hunter2token@mcp.example.com/mcp" },
      ref: { type: "http", url: "https://${MCP_USER}:${MCP_PASS}@mcp.example.com/mcp" },
      fine: { type: "http", url: "https://mcp.example.com/mcp?user=me" }
    })
    expect(JSON.stringify(result.extensions)).not.toContain("hunter2token")
    expect(result.extensions.map((e) => e["name"])).toEqual(["fine"])
    expect(result.skipped.map((s) => [s.where, s.why.split(":")[0]])).toEqual([
      ["mcpServers.token", "its url holds a user name or password (user"],
      ["mcpServers.ref", "its url holds a user name or password (user"]
    ])
    expect(JSON.stringify(result.skipped)).not.toContain("hunter2token")
  })

  it("abhed-ext mcp refuses a --url with user info (fetch would refuse it at every call), never echoing it", () => {
    const base: McpArgs = { name: "a", url: undefined, headers: [], command: undefined, args: [] }
    for (const url of ["https://hunter2@x.example/mcp", "https://${U}:${P}@x.example/mcp"]) {
      const parsed = parseTarget({ ...base, url }, { U: "me", P: "hunter2" })
      expect(parsed).toEqual(
        Result.fail("--url: holds a user name or password (user:password@); send the credential with --header")
      )
    }
  })
})
