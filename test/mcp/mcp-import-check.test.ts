import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import type { McpImport } from "../../packages/cli/src/mcp-import/McpServers.ts"
import { readMcpServers } from "../../packages/cli/src/mcp-import/McpServers.ts"
import { adapterProblems } from "../../packages/cli/src/mcp-import/McpStartCheck.ts"

/** import-mcp's start-check: each line it writes goes through the adapter's own parser (`abhed-ext mcp`). */

const problems = (imported: McpImport, launch: { readonly command: string; readonly args: ReadonlyArray<string> }) =>
  Effect.runPromise(adapterProblems(imported, launch).pipe(Effect.provide(NodeServices.layer)))

const onPath = { command: "abhed-ext", args: [] }
const thisCli = { command: "/usr/bin/node", args: ["/opt/abhed/cli.js"] }

const imported = (extensions: ReadonlyArray<Record<string, unknown>>, sources: ReadonlyArray<string>): McpImport => ({
  format: "claude",
  servers: extensions.length,
  extensions,
  sources,
  deny: [],
  skipped: [],
  warnings: []
})

describe("import-mcp's start-check", () => {
  it("passes every line the importer writes: stdio, sh -c for references, http with ${VAR} in url and headers", async () => {
    const read = readMcpServers(
      "claude",
      {
        mcpServers: {
          fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "--", "/srv"] },
          gh: { command: "npx", args: ["-y", "server-github"], env: { TOKEN: "${GH}", URL: "https://${HOST}/api" } },
          "my.docs": {
            type: "http",
            url: "https://${HOST}/mcp?x=a=b",
            headers: { Authorization: "Bearer ${DOCS}", "X-Mode": "--help" }
          }
        }
      },
      { launch: thisCli, cwd: "." }
    )
    if (Result.isFailure(read)) throw new Error(read.failure)
    expect(read.success.extensions).toHaveLength(3)
    expect(await problems(read.success, thisCli)).toEqual([])
  })

  it("a line the adapter would refuse is a problem naming its server, with the adapter's reason", async () => {
    const refused = await problems(
      imported(
        [
          { name: "ok", args: [...thisCli.args, "mcp", "--name=ok", "--", "srv"] },
          { name: "ftp", args: [...thisCli.args, "mcp", "--name=ftp", "--url=ftp://example.com/"] },
          { name: "both", args: [...thisCli.args, "mcp", "--name=both", "--url=https://h/", "--", "srv"] },
          { name: "flag", args: [...thisCli.args, "mcp", "--name=flag", "--no-such-flag", "--", "srv"] },
          { name: "bad", args: [...thisCli.args, "mcp", "--name=a.b", "--", "srv"] }
        ],
        ["mcpServers.ok", "mcpServers.ftp", "mcpServers.both", "mcpServers.flag", 'mcpServers["a.b"]']
      ),
      thisCli
    )
    expect(refused).toHaveLength(4)
    expect(refused[0]).toBe(
      "mcpServers.ftp: the adapter would refuse its command line: --url: not an http:// or https:// URL"
    )
    expect(refused[1]).toContain(
      "mcpServers.both: the adapter would refuse its command line: give either --url or a command"
    )
    expect(refused[2]).toMatch(/^mcpServers\.flag: the adapter would refuse its command line: .*no-such-flag/)
    expect(refused[3]).toContain('mcpServers["a.b"]: the adapter would refuse its command line: --name:')
  })

  it("reads the line after the launch's own words: abhed-ext on PATH has none", async () => {
    const line = imported([{ name: "s", args: ["mcp", "--name=s", "--url=nope"] }], ["mcpServers.s"])
    expect(await problems(line, onPath)).toEqual([
      "mcpServers.s: the adapter would refuse its command line: --url: not an http:// or https:// URL"
    ])
  })
})
