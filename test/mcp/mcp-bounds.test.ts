import { describe, it } from "vitest"
import { jsonLines, runCli } from "../support/cli-helpers.ts"
import { adapterExtension, floodServer, inHostExtension, invoke, lines, writeConfig } from "../support/mcp-helpers.ts"

/**
 * What a server can make its client hold (docs/mcp.md), over test/fixtures/mcp/flood-server.mjs, a real process: a
 * server that sends requests and never reads the answers closes its connection at 1 MiB unread, said once, where the
 * answers piled up without bound in the adapter (its call then hung to --timeout-ms); notifications and answers to
 * ids never asked hold nothing and lose nothing.
 */

const Slow = 180_000
const Flooded = "the connection to the MCP server is lost (the server sent requests and did not read the answers)"

const count = (text: string, part: string) => text.split(part).length - 1

describe.concurrent("a server that floods its client", () => {
  it(
    "abhed-ext mcp: requests never read close the connection at the bound, said once; the call and the next fail saying why",
    async ({ expect }) => {
      const config = writeConfig({ extensions: [adapterExtension("fl", [floodServer])] })
      const r = await runCli(["--log-level", "debug", "run", "--config", config], {
        input: lines(invoke("mcp__fl__flood"), invoke("mcp__fl__echo", { text: "after" }))
      })
      expect(r.code, r.stderr).toBe(0)
      expect(jsonLines(r.stdout)).toEqual([
        { event: "invoke_tool", is_error: true, result: Flooded },
        { event: "invoke_tool", is_error: true, result: Flooded }
      ])
      const said =
        "the connection to the MCP server is closed: it sent requests and did not read the answers (over 1048576 bytes unread in its stdin)"
      expect(count(r.stderr, said), r.stderr).toBe(1)
    },
    Slow
  )

  it(
    "protocol mcp: the server is dead with that cause, by its shape",
    async ({ expect }) => {
      const config = writeConfig({ extensions: [inHostExtension("fl", [floodServer])] })
      const r = await runCli(["run", "--config", config], {
        input: lines(invoke("mcp__fl__flood"), invoke("mcp__fl__echo", { text: "after" }))
      })
      expect(r.code, r.stderr).toBe(0)
      const cause =
        "extension fl unavailable: malformed_reply: reply: expected a server that reads the answers to its own " +
        "requests, got over 1048576 bytes of answers unread in its stdin"
      expect(jsonLines(r.stdout)).toEqual([
        { error: `tool "mcp__fl__flood": ${cause}`, line: 1 },
        { error: `tool "mcp__fl__echo": ${cause}`, line: 2 }
      ])
      expect(count(r.stderr, "extension fl is dead: malformed_reply"), r.stderr).toBe(1)
    },
    Slow
  )

  it(
    "notifications and answers to ids never asked, 200,000 each: dropped as they come, and the call is answered",
    async ({ expect }) => {
      const config = writeConfig({ extensions: [adapterExtension("fl", [floodServer])] })
      const r = await runCli(["run", "--config", config], {
        input: lines(invoke("mcp__fl__noise"), invoke("mcp__fl__echo", { text: "after" }))
      })
      expect(r.code, r.stderr).toBe(0)
      expect(jsonLines(r.stdout)).toEqual([
        { event: "invoke_tool", is_error: false, result: "after the noise" },
        { event: "invoke_tool", is_error: false, result: '{"text":"after"}' }
      ])
    },
    Slow
  )
})
