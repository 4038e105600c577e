import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bin, jsonLines, runCli } from "../support/cli-helpers.ts"
import { filesystemServer, invoke, lines } from "../support/mcp-helpers.ts"

/** `abhed-ext import-mcp` as a user runs it (docs/mcp.md); the reading itself is in mcp-import-servers.test.ts. */

const project = (files: Readonly<Record<string, string>>): string => {
  const dir = mkdtempSync(join(tmpdir(), "abhed-mcp-import-"))
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  return dir
}

const tokenInEnv = "ghp_valueFromTheEnvironment0123456789"
const literalToken = "ghp_literalInTheFile0123456789abcdefgh"

const claudeFile = JSON.stringify({
  mcpServers: {
    github: {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-github"],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}" }
    },
    notes: { command: "node", args: ["notes.js"], env: { NOTES_TOKEN: literalToken, NOTES_DIR: "notes" } },
    docs: { type: "http", url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } },
    legacy: { type: "sse", url: "https://example.com/sse" }
  }
})

// Every test here starts the CLI, some of them servers: minutes, not seconds, with the machine loaded.
describe("abhed-ext import-mcp", { timeout: 180_000 }, () => {
  it("writes a config run accepts; variables by name, never a value; a literal credential withheld and named", async () => {
    const dir = project({ ".mcp.json": claudeFile })
    const r = await runCli(["import-mcp", "--adapter-command", "true", "-o", "abhed.json", ".mcp.json"], {
      cwd: dir,
      env: { GITHUB_TOKEN: tokenInEnv, DOCS_TOKEN: tokenInEnv }
    })
    expect(r.code, r.stderr).toBe(0)
    const written = readFileSync(join(dir, "abhed.json"), "utf8")
    for (const text of [written, r.stdout, r.stderr]) {
      expect(text).not.toContain(tokenInEnv)
      expect(text).not.toContain(literalToken)
    }
    expect(written.endsWith("}\n")).toBe(true)
    const config = JSON.parse(written) as { extensions: Array<Record<string, unknown>> }
    expect(config.extensions.map((e) => [e["name"], e["env_passthrough"]])).toEqual([
      ["github", ["GITHUB_TOKEN"]],
      ["notes", ["NOTES_TOKEN"]],
      ["docs", ["DOCS_TOKEN"]]
    ])
    expect(config.extensions[1]?.["env"]).toEqual({ NOTES_DIR: "notes" })
    expect(r.stderr).toContain(".mcp.json: mcpServers.legacy: not carried over: an SSE server")
    expect(r.stderr).toContain(
      ".mcp.json: mcpServers.notes: carried over, but env.NOTES_TOKEN holds a literal value, and it looks like a credential"
    )
    expect(r.stderr).toContain(".mcp.json: 3 Claude Code MCP server(s) carried over, 1 not (above)")
    // The host reads it as any config: every extension is started (the adapter here is `true`, which exits at once).
    const listed = await runCli(["list", "--config", "abhed.json"], { cwd: dir })
    expect(listed.code, listed.stderr).toBe(0)
    for (const name of ["github", "notes", "docs"]) expect(listed.stdout).toContain(name)
  })

  it("the server gets the variables its config passes, renamed as the file said, and no other of the host's", async () => {
    // A stand-in for the server, run as the adapter would run it (the words after `--`): it blocks every call with
    // the variables it sees.
    const server = [
      "require('readline').createInterface({ input: process.stdin }).on('line', (line) => {",
      "  const { id, event } = JSON.parse(line); const e = process.env",
      "  const seen = { API_KEY: e.API_KEY, MODE: e.MODE, PLAIN: e.PLAIN, MY_KEY: e.MY_KEY, OTHER: e.OTHER, NOTES_TOKEN: e.NOTES_TOKEN }",
      "  console.log(JSON.stringify(event === 'tool_call' ? { id, block: true, reason: JSON.stringify(seen) } : { id }))",
      "})"
    ].join("\n")
    const dir = project({
      ".mcp.json": JSON.stringify({
        mcpServers: {
          probe: {
            command: process.execPath,
            args: ["-e", server],
            env: { API_KEY: "${MY_KEY}", MODE: "fast", PLAIN: "${PLAIN}", NOTES_TOKEN: literalToken }
          }
        }
      })
    })
    const imported = await runCli(["import-mcp", ".mcp.json"], { cwd: dir })
    expect(imported.code, imported.stderr).toBe(0)
    const config = JSON.parse(imported.stdout) as { extensions: Array<Record<string, unknown>> }
    const extension = config.extensions[0] ?? {}
    const args = extension["args"] as Array<string>
    const [command, ...rest] = args.slice(args.indexOf("--") + 1)
    expect(command).toBe("sh")
    writeFileSync(
      join(dir, "probe.json"),
      JSON.stringify({ extensions: [{ ...extension, command, args: rest, events: ["tool_call"] }] })
    )
    const r = await runCli(["run", "--config", "probe.json"], {
      cwd: dir,
      input: `${JSON.stringify({ event: "tool_call", tool: "mcp__probe__x", args: {} })}\n`,
      env: { MY_KEY: "k-1", PLAIN: "p-1", OTHER: "o-1", NOTES_TOKEN: "from-the-shell" }
    })
    expect(r.code, r.stderr).toBe(0)
    const [line] = r.stdout.trim().split("\n")
    const reason = (JSON.parse(line ?? "{}") as { reasons: Array<{ reason: string }> }).reasons[0]?.reason ?? ""
    // MY_KEY is passed because API_KEY is set from it; OTHER is not passed; the withheld literal is read from the shell.
    expect(JSON.parse(reason)).toEqual({
      API_KEY: "k-1",
      MODE: "fast",
      PLAIN: "p-1",
      MY_KEY: "k-1",
      NOTES_TOKEN: "from-the-shell"
    })
  })

  it("reads stdin with -, tells Gemini CLI's file by its keys, and writes cwd relative to -o's folder", async () => {
    const dir = project({
      "proj/.gemini/settings.json": JSON.stringify({
        mcpServers: { py: { command: "python3", args: ["-m", "srv"], cwd: "srv" } }
      })
    })
    mkdirSync(join(dir, "out"))
    const fromFile = await runCli(["import-mcp", "-o", "out/abhed.json", "proj/.gemini/settings.json"], { cwd: dir })
    expect(fromFile.code, fromFile.stderr).toBe(0)
    const config = JSON.parse(readFileSync(join(dir, "out/abhed.json"), "utf8")) as {
      extensions: Array<Record<string, unknown>>
    }
    expect(config.extensions[0]?.["cwd"]).toBe("../proj/srv")
    expect(config.extensions[0]?.["command"]).toBe("abhed-ext")

    const piped = await runCli(["import-mcp", "-"], {
      cwd: dir,
      input: JSON.stringify({
        mcpServers: { remote: { httpUrl: "https://example.com/mcp", headers: { "X-Key": "$KEY" } } }
      })
    })
    expect(piped.code, piped.stderr).toBe(0)
    expect(piped.stderr).toContain("-: 1 Gemini CLI MCP server(s) carried over")
    const extension = (JSON.parse(piped.stdout) as { extensions: Array<Record<string, unknown>> }).extensions[0]
    expect(extension?.["args"]).toContain("--header=X-Key:${KEY}")
    expect(extension?.["env_passthrough"]).toEqual(["KEY"])
  })

  it("--this-cli runs the adapter as this Node and this CLI", async () => {
    const dir = project({ ".mcp.json": JSON.stringify({ mcpServers: { s: { command: "srv" } } }) })
    const r = await runCli(["import-mcp", "--this-cli", ".mcp.json"], { cwd: dir })
    expect(r.code, r.stderr).toBe(0)
    const extension = (JSON.parse(r.stdout) as { extensions: Array<Record<string, unknown>> }).extensions[0]
    expect(extension?.["command"]).toBe(process.execPath)
    expect(extension?.["args"]).toEqual([
      bin,
      "mcp",
      "--name=s",
      "--timeout-ms=60000",
      "--startup-timeout-ms=60000",
      "--",
      "srv"
    ])
  })

  describe("bad input is one line on stderr naming the file, exit 1, nothing on stdout", () => {
    const dir = project({
      "broken.json": '{"mcpServers": {',
      "hooks.json": JSON.stringify({ hooks: {} }),
      "nul.json": JSON.stringify({ mcpServers: { s: { command: "srv", args: ["a\u0000b"] } } }),
      ".claude/settings.json": '{\n  // a comment\n  "mcpServers": {}\n}'
    })
    const cases: ReadonlyArray<readonly [string, RegExp]> = [
      ["broken.json", /^cannot read broken\.json: not JSON: /],
      ["hooks.json", /^cannot read hooks\.json: no "mcpServers" in it: expected Claude Code's \.mcp\.json/],
      ["missing.json", /^cannot read missing\.json: /],
      [
        ".claude/settings.json",
        /^cannot read \.claude\/settings\.json: not JSON: .*\(Claude Code reads its MCP files as plain JSON: no comments; for a Gemini CLI file, give --format gemini\)$/
      ],
      ["nul.json", /^nul\.json: the generated config would be refused: extensions\[0\]\.args\[6\]: /]
    ]
    for (const [file, message] of cases) {
      it(file, async () => {
        const r = await runCli(["import-mcp", file], { cwd: dir })
        expect(r.code, r.stderr).toBe(1)
        expect(r.stdout).toBe("")
        expect(r.stderr.trim().split("\n").at(-1)).toMatch(message)
      })
    }
  })

  it("shows the file's own text escaped: a hostile url cannot drive the terminal", async () => {
    // The name is quoted with JSON escapes; the url is shown as written, so it is what printable() must escape.
    const hostile = { "\u001b]0;owned\u0007": { type: "http", url: "https://x/${HOST}\u001b]0;owned\u0007" } }
    const dir = project({ ".mcp.json": JSON.stringify({ mcpServers: hostile }) })
    const r = await runCli(["import-mcp", ".mcp.json"], { cwd: dir })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).not.toContain("\u001b")
    expect(r.stderr).not.toContain("\u0007")
  })

  it("without a file is a usage error: exit 64", async () => {
    const r = await runCli(["import-mcp"])
    expect(r.code).toBe(64)
  })

  it("an imported .mcp.json runs: server-filesystem's tools listed as mcp__fs__*, a file read through the adapter", async () => {
    const dir = realpathSync(project({ "notes.txt": "imported and read\n" }))
    writeFileSync(
      join(dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { fs: { command: process.execPath, args: [filesystemServer, dir] } } })
    )
    const imported = await runCli(["import-mcp", "--this-cli", "-o", "abhed.json", ".mcp.json"], { cwd: dir })
    expect(imported.code, imported.stderr).toBe(0)
    // The generated bounds (60 s for the server's start, 61 s a call) are the patient ones: the config is run as written.
    const r = await runCli(["run", "--config", "abhed.json"], {
      cwd: dir,
      input: lines({ event: "list_tools" }, invoke("mcp__fs__read_file", { path: join(dir, "notes.txt") }))
    })
    expect(r.code, r.stderr).toBe(0)
    const [list, read] = jsonLines(r.stdout) as Array<Record<string, unknown>>
    const names = (list?.["tools"] as Array<{ name: string }>).map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(["mcp__fs__read_file", "mcp__fs__write_file"]))
    expect(read).toMatchObject({ event: "invoke_tool", is_error: false })
    expect(JSON.stringify(read?.["result"])).toContain("imported and read")
  }, 180_000)

  it("--in-host: a stdio server is one the host speaks MCP to (runs as written); an HTTP or reserved-name one keeps the adapter", async () => {
    const dir = realpathSync(project({ "notes.txt": "read in-host\n" }))
    writeFileSync(
      join(dir, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          fs: { command: process.execPath, args: [filesystemServer, dir], env: { TOKEN: "${FS_TOKEN}" } },
          docs: { type: "http", url: "https://docs.example.com/mcp" },
          host: { command: "node", args: ["host.js"] }
        }
      })
    )
    const imported = await runCli(["import-mcp", "--in-host", "--this-cli", "-o", "abhed.json", ".mcp.json"], {
      cwd: dir
    })
    expect(imported.code, imported.stderr).toBe(0)
    const config = JSON.parse(readFileSync(join(dir, "abhed.json"), "utf8")) as {
      extensions: Array<Record<string, unknown>>
    }
    // A variable renamed on the way: the shell sets it as the server starts, as for the adapter.
    expect(config.extensions[0]).toEqual({
      name: "fs",
      command: "sh",
      args: ["-c", `export TOKEN="\${FS_TOKEN}"; exec "$@"`, "sh", process.execPath, filesystemServer, dir],
      protocol: "mcp",
      cwd: ".",
      env_passthrough: ["FS_TOKEN"],
      timeout_ms: 75_000,
      startup_timeout_ms: 75_000
    })
    expect(config.extensions.slice(1).map((e) => [e["name"], e["protocol"], (e["args"] as Array<string>)[1]])).toEqual([
      ["docs", undefined, "mcp"],
      ["mcp-host", undefined, "mcp"]
    ])
    expect(imported.stderr).toContain(
      "mcpServers.docs: carried over, but an HTTP server goes through the adapter (the host speaks MCP over stdio only)"
    )
    expect(imported.stderr).toContain("four fifths of its extension's timeout_ms")
    const run = await runCli(["run", "--config", "abhed.json"], {
      cwd: dir,
      input: lines(invoke("mcp__fs__read_text_file", { path: join(dir, "notes.txt") }))
    })
    expect(run.code, run.stderr).toBe(0)
    const [read] = jsonLines(run.stdout) as Array<Record<string, unknown>>
    expect(read).toMatchObject({ event: "invoke_tool", is_error: false })
    expect(JSON.stringify(read?.["result"])).toContain("read in-host")
  }, 180_000)
})
