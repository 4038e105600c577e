import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, it } from "vitest"
import { bin, jsonLines, runCli } from "../support/cli-helpers.ts"
import { adapterExtension, faultyServer, inHostExtension, lines, writeConfig } from "../support/mcp-helpers.ts"

/**
 * A server the adapter cannot reach, as a hurried user meets it: `abhed-ext run` used to answer its `list_tools` with
 * no tools and say nothing (the cause was on the adapter's stderr, which the host logs at debug level). Now the adapter
 * answers `failed` with what happened, and run says it once on stderr at the default level, naming the extension;
 * `abhed-ext mcp` alone says it on stderr and in its reply; `abhed-ext check` fails on it. Every server here is a real
 * process (Node, so no shell is assumed).
 */

const Slow = 180_000

/** A server that reads its stdin and exits when it closes, after `setup` (JavaScript). */
const node = (setup: string) => [
  "-e",
  `${setup}; process.stdin.resume(); process.stdin.on("end", () => process.exit(0))`
]

const cases = {
  "not found": {
    server: ["/nonexistent/mcp-server"],
    why: `its command "/nonexistent/mcp-server" was not found (ENOENT: not on PATH, or no such file from the extension's cwd)`
  },
  "exits at once": {
    server: [process.execPath, "-e", `console.error("Error: GITHUB_TOKEN is not set"); process.exit(3)`],
    why: "it exited with code 3; its last stderr line: Error: GITHUB_TOKEN is not set"
  },
  "answers garbage": {
    server: [process.execPath, ...node(`console.log("Server listening on stdio \\u001b[31m")`)],
    // The excerpt printable: the escape shown as JSON writes it, never sent to the terminal.
    why: `it wrote a line that is not JSON-RPC (invalid JSON (31 bytes)): "Server listening on stdio \\u001b[31m"`
  },
  "never answers initialize": {
    server: [process.execPath, ...node("")],
    why:
      "it did not answer initialize within 3000 ms (--startup-timeout-ms; raise it for a server slow to start, one npx " +
      "downloads first say)"
  }
} as const

/** `abhed-ext mcp --name x --startup-timeout-ms 3000 -- SERVER…`: a server that never starts is said in 3 s. */
const adapterArgs = (server: ReadonlyArray<string>) => [
  "mcp",
  "--name",
  "x",
  "--startup-timeout-ms",
  "3000",
  "--",
  ...server
]

describe.concurrent("abhed-ext run: a server the adapter cannot reach is said once, on stderr", () => {
  for (const [name, { server, why }] of Object.entries(cases)) {
    it(
      name,
      async ({ expect }) => {
        const config = writeConfig({
          extensions: [{ ...adapterExtension("x", []), args: [bin, ...adapterArgs(server)] }]
        })
        const r = await runCli(["run", "--config", config], {
          input: lines({ event: "list_tools" }, { event: "tool_call", tool: "bash", args: { command: "ls" } })
        })
        expect(r.code, r.stderr).toBe(0)
        const said = `extension mcp-x could not answer a list_tools request: the MCP server did not start: ${why}`
        expect(r.stderr.split(said).length - 1, r.stderr).toBe(1)
        // The session goes on: no tools from it, and the other events are judged.
        expect(jsonLines(r.stdout)).toEqual([
          { event: "list_tools", tools: [] },
          expect.objectContaining({ event: "tool_call", decision: "allow" })
        ])
      },
      Slow
    )
  }
})

describe.concurrent("abhed-ext run: an HTTP server the adapter cannot reach", () => {
  it(
    "refused: said once, with the URL (never its query) and the cause beneath effect's words",
    async ({ expect }) => {
      // A port that was just listened on and is closed: nothing answers there.
      const server = createServer()
      const port = await new Promise<number>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
      )
      await new Promise((resolve) => server.close(resolve))
      const url = `http://127.0.0.1:${port}/mcp`
      const config = writeConfig({
        extensions: [{ ...adapterExtension("x", []), args: [bin, "mcp", "--name", "x", `--url=${url}?token=t-7f3a`] }]
      })
      const r = await runCli(["run", "--config", config], { input: lines({ event: "list_tools" }) })
      expect(r.code, r.stderr).toBe(0)
      const said =
        "extension mcp-x could not answer a list_tools request: the MCP server did not start: " +
        `MCP HTTP request failed at ${url}: connect ECONNREFUSED 127.0.0.1:${port}`
      expect(r.stderr.split(said).length - 1, r.stderr).toBe(1)
      expect(r.stderr).not.toContain("t-7f3a")
      expect(jsonLines(r.stdout)).toEqual([{ event: "list_tools", tools: [] }])
    },
    Slow
  )
})

describe.concurrent("abhed-ext mcp and check: the same cause", () => {
  const request = (event: string, id: number) =>
    `${JSON.stringify({ event, id, session_id: "s", protocol_version: 1 })}\n`

  it(
    "abhed-ext mcp alone: once on stderr, and in its reply as failed",
    async ({ expect }) => {
      const { server, why } = cases["exits at once"]
      const r = await runCli(adapterArgs(server), { input: request("list_tools", 1) })
      expect(r.code, r.stderr).toBe(0)
      expect(jsonLines(r.stdout)).toEqual([{ failed: `the MCP server did not start: ${why}`, id: 1 }])
      expect(r.stderr.split("abhed-ext mcp x: the MCP server did not start").length - 1, r.stderr).toBe(1)
    },
    Slow
  )

  it(
    "abhed-ext check fails the adapter, saying why",
    async ({ expect }) => {
      const { server, why } = cases["not found"]
      const r = await runCli(["check", "--", process.execPath, bin, ...adapterArgs(server)])
      expect(r.code, r.stdout + r.stderr).toBe(1)
      expect(r.stdout).toContain("FAIL  valid_replies")
      expect(r.stdout).toContain(`extension error (its stderr): abhed-ext mcp x: the MCP server did not start: ${why}`)
    },
    Slow
  )
})

describe.concurrent("a wrong config entry", () => {
  it(
    "an adapter's bounds not below its extension's: run warns at start, once each, and not for an entry that fits",
    async ({ expect }) => {
      const config = writeConfig({
        extensions: [
          adapterExtension("slow", [faultyServer], { timeoutMs: 8000, extra: { timeout_ms: 5000 } }),
          adapterExtension("fits", [faultyServer])
        ]
      })
      const r = await runCli(["run", "--config", config], { input: lines({ event: "list_tools" }) })
      expect(r.code, r.stderr).toBe(0)
      const warnings = r.stderr.split("\n").filter((line) => line.startsWith("abhed-ext run: warning: extension"))
      expect(warnings).toEqual([
        "abhed-ext run: warning: extension mcp-slow: its abhed-ext mcp --timeout-ms 8000 is not below its timeout_ms " +
          "5000: the host would time out the adapter first, and every tool of its server would go with it; give " +
          "timeout_ms above 8000"
      ])
    },
    Slow
  )

  it(
    'the adapter given "protocol": "mcp": the host speaks MCP to it, and its death says what to change',
    async ({ expect }) => {
      const config = writeConfig({
        extensions: [inHostExtension("fs", [bin, "mcp", "--name", "fs", "--", process.execPath, faultyServer])]
      })
      const r = await runCli(["run", "--config", config], { input: lines({ event: "list_tools" }) })
      expect(r.code, r.stderr).toBe(0)
      const said =
        'extension fs is dead: exited (code 1): abhed-ext mcp: its first request is an MCP client\'s (JSON-RPC "initialize"): ' +
        'it is an extension, not an MCP server; remove "protocol": "mcp" from its config entry (docs/mcp.md)'
      expect(r.stderr.split(said).length - 1, r.stderr).toBe(1)
      expect(jsonLines(r.stdout)).toEqual([{ event: "list_tools", tools: [] }])
    },
    Slow
  )

  it(
    'an MCP server without "protocol": "mcp": its JSON-RPC errors are a death that says what to change, not no opinion',
    async ({ expect }) => {
      const config = writeConfig({
        extensions: [{ ...inHostExtension("f", [faultyServer]), protocol: undefined }]
      })
      const r = await runCli(["run", "--config", config], { input: lines({ event: "list_tools" }) })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toContain(
        'extension f is dead: malformed_reply: reply: expected an extension\'s reply, got a JSON-RPC error (an MCP server? give its config entry "protocol": "mcp", or run it through abhed-ext mcp)'
      )
      expect(jsonLines(r.stdout)).toEqual([{ event: "list_tools", tools: [] }])
    },
    Slow
  )
})
