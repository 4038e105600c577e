import { join } from "node:path"
import { describe, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"
import { adapterExtension, inHostExtension, lines, writeConfig } from "../support/mcp-helpers.ts"

/**
 * A server whose tool names our tool-name rule does not take as they are: one renamed, one left out. The operator is
 * told at the default log level, whichever way the server is reached (the host speaking MCP, or the adapter, whose
 * words travel in its list_tools reply's `warnings`: docs/protocol.md), never only in a debug log.
 */

const Slow = 180_000
const dotted = join(repoRoot, "test/fixtures/mcp/dotted-server.mjs")
const renamed = 'tool "files.read" declared as "mcp__d__files_read"'
const skipped = 'tool "files_read" skipped: another of the server\'s tools is already declared as "mcp__d__files_read"'

describe.concurrent("tool names a server gives that do not fit", () => {
  for (const [way, extension] of [
    ["the host speaking MCP", inHostExtension("d", [dotted])],
    ["the adapter", adapterExtension("d", [dotted])]
  ] as const) {
    it(
      `${way}: the renamed and the skipped tool are warned about on stderr, and the renamed one is offered`,
      async ({ expect }) => {
        const config = writeConfig({ extensions: [extension] })
        const r = await runCli(["run", "--config", config], { input: lines({ event: "list_tools" }) })
        expect(r.code, r.stderr).toBe(0)
        const [list] = jsonLines(r.stdout) as Array<{ tools: Array<{ name: string }> }>
        expect(list?.tools.map((t) => t.name)).toEqual(["mcp__d__files_read"])
        expect(r.stderr).toContain(`extension ${extension.name} warns: ${renamed}`)
        expect(r.stderr).toContain(`extension ${extension.name} warns: ${skipped}`)
      },
      Slow
    )
  }
})
