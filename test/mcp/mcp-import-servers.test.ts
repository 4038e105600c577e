import { spawnSync } from "node:child_process"
import { decodeConfig } from "@abhed/protocol"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { HookFormat } from "../../packages/cli/src/hook/HookFormat.ts"
import { piecesOf, shellWord } from "../../packages/cli/src/mcp-import/McpReferences.ts"
import { detectFormat, parseMcpFile } from "../../packages/cli/src/mcp-import/McpFile.ts"
import { type McpImport, readMcpServers } from "../../packages/cli/src/mcp-import/McpServers.ts"

/** import-mcp's reading of the peers' files, without processes (mcp-import.test.ts runs the CLI). */

const launch = { command: "abhed-ext", args: [] }

const read = (format: HookFormat, settings: unknown): McpImport => {
  const result = readMcpServers(format, settings, { launch, cwd: "." })
  if (Result.isFailure(result)) throw new Error(result.failure)
  return result.success
}

/** Claude Code's .mcp.json with one streamable HTTP server, "api". */
const httpServer = (url: string, headers: Record<string, string>): McpImport =>
  read("claude", { mcpServers: { api: { type: "http", url, headers } } })

/** The adapter's arguments before the server's own: its name and bounds (60 s each unless the file says). */
const adapterHead = (name: string, timeoutMs = 60000) => [
  "mcp",
  `--name=${name}`,
  `--timeout-ms=${timeoutMs}`,
  "--startup-timeout-ms=60000"
]

const only = (imported: McpImport): Record<string, unknown> => {
  expect(imported.extensions).toHaveLength(1)
  return imported.extensions[0] ?? {}
}

/** The config as written, checked by the same decoder `run` uses. */
const accepted = (imported: McpImport) => {
  const config = {
    extensions: imported.extensions,
    ...(imported.deny.length === 0 ? {} : { policy: { deny: imported.deny } })
  }
  const decoded = decodeConfig(config)
  expect(Result.isSuccess(decoded), Result.isFailure(decoded) ? decoded.failure.message : "").toBe(true)
}

describe("Claude Code's .mcp.json", () => {
  it("a stdio server: the adapter runs its command; ${VAR} in env is passed by name; a literal value is kept", () => {
    const imported = read("claude", {
      mcpServers: {
        github: {
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-github"],
          env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_PERSONAL_ACCESS_TOKEN}", LOG_LEVEL: "info" }
        }
      }
    })
    expect(only(imported)).toEqual({
      name: "github",
      command: "abhed-ext",
      args: [...adapterHead("github"), "--", "npx", "-y", "@modelcontextprotocol/server-github"],
      events: ["list_tools", "invoke_tool"],
      cwd: ".",
      env: { LOG_LEVEL: "info" },
      env_passthrough: ["GITHUB_PERSONAL_ACCESS_TOKEN"],
      timeout_ms: 61000,
      startup_timeout_ms: 65000
    })
    expect(imported.warnings).toEqual([])
    accepted(imported)
  })

  it("an http server: --url and --header; a ${VAR} in a header stays a reference, passed by name", () => {
    const imported = httpServer("https://api.example.com/mcp", {
      Authorization: "Bearer ${API_TOKEN}",
      "X-Org": "acme"
    })
    const extension = only(imported)
    expect(extension["args"]).toEqual([
      ...adapterHead("api"),
      "--url=https://api.example.com/mcp",
      "--header=Authorization:Bearer ${API_TOKEN}",
      "--header=X-Org:acme"
    ])
    expect(extension["env_passthrough"]).toEqual(["API_TOKEN"])
    expect(extension["cwd"]).toBeUndefined()
    accepted(imported)
  })

  it("a variable from another name, or in a mix, is set by sh from the references when the server starts", () => {
    const imported = read("claude", {
      mcpServers: {
        db: {
          command: "node",
          args: ["server.js", "--root=${PROJECT_ROOT:-.}"],
          env: { API_KEY: "${MY_KEY}", URL: "https://${HOST}/v1" }
        }
      }
    })
    const extension = only(imported)
    expect(extension["args"]).toEqual([
      ...adapterHead("db"),
      "--",
      "sh",
      "-c",
      'export API_KEY="${MY_KEY}"; export URL=https://"${HOST}"/v1; exec "${1}" "${2}" --root="${PROJECT_ROOT:-.}"',
      "sh",
      "node",
      "server.js"
    ])
    expect(extension["env_passthrough"]).toEqual(["MY_KEY", "HOST", "PROJECT_ROOT"])
    expect(extension["env"]).toBeUndefined()
    accepted(imported)
  })

  it("a bare $VAR is text to Claude Code, and stays text", () => {
    const extension = only(read("claude", { mcpServers: { s: { command: "srv", env: { PRICE: "$5" } } } }))
    expect(extension["env"]).toEqual({ PRICE: "$5" })
    expect(extension["env_passthrough"]).toBeUndefined()
  })

  it("literal credentials are not copied: env by its name, a header by a variable named for it; each said", () => {
    const imported = read("claude", {
      mcpServers: {
        gh: {
          command: "srv",
          env: {
            GITHUB_TOKEN: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            DATABASE: "postgres://me:hunter2@db/x",
            MODE: "fast"
          }
        },
        api: {
          type: "http",
          url: "https://api.example.com/mcp",
          headers: { Authorization: "Bearer s3cr3t-value", "X-Api-Key": "k-123" }
        }
      }
    })
    const text = JSON.stringify(imported.extensions)
    for (const secret of ["ghp_abcdefghij", "hunter2", "s3cr3t-value", "k-123"]) expect(text).not.toContain(secret)
    const [gh, api] = imported.extensions
    expect(gh?.["env"]).toEqual({ MODE: "fast" })
    expect(gh?.["env_passthrough"]).toEqual(["GITHUB_TOKEN", "DATABASE"])
    expect(api?.["args"]).toEqual([
      ...adapterHead("api"),
      "--url=https://api.example.com/mcp",
      "--header=Authorization:Bearer ${API_AUTHORIZATION}",
      "--header=X-Api-Key:${API_X_API_KEY}"
    ])
    expect(api?.["env_passthrough"]).toEqual(["API_AUTHORIZATION", "API_X_API_KEY"])
    expect(imported.warnings.map((w) => `${w.where}: ${w.why.split(":")[0]}`)).toEqual([
      "mcpServers.gh: env.GITHUB_TOKEN holds a literal value, and it looks like a credential",
      "mcpServers.gh: env.DATABASE holds a literal value, and it looks like a credential",
      "mcpServers.api: headers.Authorization holds a literal credential",
      "mcpServers.api: headers.X-Api-Key holds a literal credential"
    ])
    expect(imported.warnings[2]?.why).toContain('export API_AUTHORIZATION (the value after "Bearer")')
    accepted(imported)
  })

  it("references in the url and a header's ${VAR:-default} are left for the adapter to read when it starts", () => {
    const imported = httpServer("https://${API_HOST:-api.example.com}/mcp?org=${ORG}", { "X-Region": "${REGION:-eu}" })
    const extension = only(imported)
    expect(extension["args"]).toEqual([
      ...adapterHead("api"),
      "--url=https://${API_HOST:-api.example.com}/mcp?org=${ORG}",
      "--header=X-Region:${REGION:-eu}"
    ])
    expect(extension["env_passthrough"]).toEqual(["API_HOST", "ORG", "REGION"])
    expect(imported.warnings).toEqual([])
  })

  it("a credential in args or in the url skips the server, saying where", () => {
    const imported = read("claude", {
      mcpServers: {
        a: { command: "srv", args: ["--token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"] },
        b: { type: "http", url: "https://me:pw@example.com/mcp" },
        c: { type: "http", url: "https://example.com/mcp?api_key=abc" }
      }
    })
    expect(imported.extensions).toEqual([])
    expect(imported.skipped.map((s) => s.where)).toEqual(["mcpServers.a", "mcpServers.b", "mcpServers.c"])
    expect(imported.skipped[0]?.why).toContain("args[1] holds what looks like a credential")
    expect(JSON.stringify(imported)).not.toContain("ghp_abcdefghij")
  })

  it("skips SSE, unknown transports, entries without a command or url, and disabled servers, with the reason", () => {
    const imported = read("claude", {
      disabledMcpjsonServers: ["off"],
      mcpServers: {
        events: { type: "sse", url: "https://example.com/sse" },
        socket: { type: "ws", url: "ws://localhost:1" },
        empty: {},
        off: { command: "srv" },
        flagged: { command: "srv", disabled: true },
        notAnObject: "srv",
        ok: { command: "srv" }
      }
    })
    expect(imported.extensions.map((e) => e["name"])).toEqual(["ok"])
    expect(imported.skipped).toEqual([
      { where: "mcpServers.events", why: expect.stringContaining("an SSE server") },
      { where: "mcpServers.socket", why: 'transport "ws" is not one the adapter speaks (stdio, http)' },
      { where: "mcpServers.empty", why: "neither a command nor a url" },
      { where: "mcpServers.off", why: "disabled (listed in disabledMcpjsonServers)" },
      { where: "mcpServers.flagged", why: 'disabled ("disabled": true)' },
      { where: "mcpServers.notAnObject", why: "expected an object" }
    ])
  })

  it("a url without a type is taken as streamable HTTP, and said", () => {
    const imported = read("claude", { mcpServers: { r: { url: "https://example.com/mcp" } } })
    expect(only(imported)["args"]).toContain("--url=https://example.com/mcp")
    expect(imported.warnings[0]?.why).toContain("taken as streamable HTTP")
  })
})

describe("Gemini CLI's settings.json", () => {
  it("command with cwd, httpUrl, url with type http; $VAR and ${VAR}; timeout carried over", () => {
    const imported = read("gemini", {
      mcpServers: {
        py: {
          command: "python",
          args: ["-m", "srv"],
          cwd: "./servers/py",
          env: { DATABASE_URL: "$DB_URL", API_KEY: "${API_KEY}" },
          timeout: 15000
        },
        remote: { httpUrl: "https://example.com/mcp", headers: { Authorization: "Bearer $TOKEN" } },
        typed: { url: "https://example.com/mcp", type: "http" }
      }
    })
    const [py, remote, typed] = imported.extensions
    expect(py).toMatchObject({
      args: [
        ...adapterHead("py", 15000),
        "--",
        "sh",
        "-c",
        'export DATABASE_URL="${DB_URL}"; exec "$@"',
        "sh",
        "python",
        "-m",
        "srv"
      ],
      cwd: "servers/py",
      env_passthrough: ["DB_URL", "API_KEY"],
      timeout_ms: 16000,
      startup_timeout_ms: 65000
    })
    expect(remote?.["args"]).toContain("--header=Authorization:Bearer ${TOKEN}")
    expect(remote?.["env_passthrough"]).toEqual(["TOKEN"])
    expect(typed?.["args"]).toContain("--url=https://example.com/mcp")
    accepted(imported)
  })

  it("url alone is SSE: skipped; mcp.excluded and mcp.allowed turn servers off", () => {
    const imported = read("gemini", {
      mcp: { allowed: ["a", "b", "sse"], excluded: ["b"] },
      mcpServers: {
        a: { command: "srv" },
        b: { command: "srv" },
        c: { command: "srv" },
        sse: { url: "https://example.com/sse" }
      }
    })
    expect(imported.extensions.map((e) => e["name"])).toEqual(["a"])
    expect(imported.skipped).toEqual([
      { where: "mcpServers.b", why: "disabled (listed in mcp.excluded)" },
      { where: "mcpServers.c", why: "disabled (not listed in mcp.allowed)" },
      { where: "mcpServers.sse", why: expect.stringContaining('as "httpUrl"') }
    ])
  })

  it("excludeTools become policy deny rules; trust and includeTools are said not to be carried over", () => {
    const imported = read("gemini", {
      mcpServers: {
        fs: { command: "srv", trust: true, includeTools: ["read_file"], excludeTools: ["write_file", "bad name"] }
      }
    })
    expect(imported.deny).toEqual([{ tool: "mcp__fs__write_file", reason: "excluded by fs's excludeTools" }])
    expect(imported.warnings.map((w) => w.why)).toEqual([
      expect.stringContaining('"trust": true is not carried over'),
      expect.stringContaining('"includeTools" is not carried over'),
      expect.stringContaining('excludeTools: "bad name"')
    ])
    accepted(imported)
  })
})

describe("names", () => {
  it("made of letters, digits, _ and - as Claude Code names the tools; reserved names get mcp-; unique ignoring case", () => {
    const imported = read("claude", {
      mcpServers: {
        "my.server": { command: "a" },
        my_server: { command: "b" },
        host: { command: "c" },
        GitHub: { command: "d" },
        github: { command: "e" }
      }
    })
    expect(imported.extensions.map((e) => [e["name"], (e["args"] as Array<string>)[1]])).toEqual([
      ["my_server_2", "--name=my_server_2"],
      ["my_server", "--name=my_server"],
      ["mcp-host", "--name=host"],
      ["GitHub", "--name=GitHub"],
      ["github_2", "--name=github_2"]
    ])
    accepted(imported)
  })
  it("at most 40 characters, the adapter's limit, suffix included", () => {
    const long = "a".repeat(50)
    const imported = read("claude", { mcpServers: { [long]: { command: "a" }, [`${long}.x`]: { command: "b" } } })
    expect(imported.extensions.map((e) => e["name"])).toEqual(["a".repeat(40), `${"a".repeat(38)}_2`])
    expect(imported.warnings[0]?.why).toContain(`mcp__${"a".repeat(40)}__TOOL`)
    accepted(imported)
  })
})

describe("reading the file", () => {
  it("tells the format by where the file is, then by Gemini-only keys", () => {
    expect(detectFormat("proj/.gemini/settings.json", { mcpServers: {} })).toBe("gemini")
    expect(detectFormat("proj/.mcp.json", { mcpServers: { a: { httpUrl: "x" } } })).toBe("claude")
    expect(detectFormat("servers.json", { mcpServers: { a: { httpUrl: "x" } } })).toBe("gemini")
    expect(detectFormat(undefined, { mcp: {}, mcpServers: {} })).toBe("gemini")
    expect(detectFormat(undefined, { mcpServers: { a: { command: "x" } } })).toBe("claude")
  })

  it("comments are read in a Gemini file, refused in a Claude one; a trailing comma has its line and column", () => {
    expect(
      Result.isSuccess(parseMcpFile("p/.gemini/settings.json", '{\n // mine\n "mcpServers": {}\n}', undefined))
    ).toBe(true)
    const claude = parseMcpFile(".mcp.json", '{\n // mine\n "mcpServers": {}\n}', undefined)
    expect(Result.isFailure(claude) && claude.failure).toContain("plain JSON: no comments")
    const comma = parseMcpFile("p/.gemini/settings.json", '{\n "mcpServers": {},\n}', undefined)
    expect(Result.isFailure(comma) && comma.failure).toMatch(
      /^not JSON with comments: line 2, column \d+: trailing comma/
    )
  })

  it("a file without mcpServers, or with a bad one, is an error that says what was expected", () => {
    const none = readMcpServers("claude", { hooks: {} }, { launch, cwd: "." })
    expect(Result.isFailure(none) && none.failure).toContain('no "mcpServers" in it')
    const bad = readMcpServers("claude", { mcpServers: [] }, { launch, cwd: "." })
    expect(Result.isFailure(bad) && bad.failure).toBe("mcpServers: expected an object of servers, by name")
  })
})

describe("shell words", () => {
  it("sh gives the server exactly the text, with each reference's value, unsplit and unglobbed", () => {
    const words = ["it's $HOME *", "--x=${A}", '${B:-d"$`\\ef}', "${C}${A}"].map((w) =>
      shellWord(piecesOf("claude", w))
    )
    const r = spawnSync("sh", ["-c", `printf '%s\\n' ${words.join(" ")}`], {
      env: { PATH: process.env["PATH"], A: "a b", C: "*" },
      encoding: "utf8"
    })
    expect(r.stdout).toBe("it's $HOME *\n--x=a b\nd\"$`\\ef\n*a b\n")
  })
})
