import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, it } from "vitest"
import { jsonLines, runCli } from "../support/cli-helpers.ts"
import {
  adapterExtension,
  everythingServer,
  filesystemServer,
  guardExtension,
  invoke,
  lines,
  writeConfig
} from "../support/mcp-helpers.ts"

/**
 * `abhed-ext mcp` through `abhed-ext run`, against the real MCP servers from the registry (docs/mcp.md): their tools
 * declared as mcp__NAME__TOOL, calls answered with their results, a guard on an MCP tool name, the server's own
 * refusals and errors as failed tool results, and a call past --timeout-ms cancelled.
 */

type Line = Record<string, unknown>

/**
 * A test that starts real servers: minutes, not seconds, on a loaded machine (nothing waits for it unless broken).
 * The two servers share nothing, so their tests run at once (each mostly waits: a server's start, a timeout).
 */
const Slow = 180_000

describe.concurrent("abhed-ext mcp: server-filesystem", () => {
  it(
    "lists its tools, reads a file, a guard denies mcp__fs__write_file, a path outside its root is refused",
    async ({ expect }) => {
      const root = realpathSync(mkdtempSync(join(tmpdir(), "abhed-mcp-root-")))
      mkdirSync(join(root, "docs"))
      writeFileSync(join(root, "docs", "notes.txt"), "the notes\n")
      const outside = realpathSync(mkdtempSync(join(tmpdir(), "abhed-mcp-outside-")))
      writeFileSync(join(outside, "secret.txt"), "not for the model\n")
      const config = writeConfig({
        extensions: [
          // Subscribed as import-mcp writes it: no session_start, so list_tools waits for the server's start.
          adapterExtension("fs", [filesystemServer, root], { extra: { events: ["list_tools", "invoke_tool"] } }),
          guardExtension("^mcp__fs__write_file$")
        ]
      })
      const r = await runCli(["run", "--config", config], {
        input: lines(
          { event: "list_tools" },
          invoke("mcp__fs__read_text_file", { path: join(root, "docs", "notes.txt") }),
          { event: "tool_call", tool: "mcp__fs__write_file", args: { path: join(root, "x.txt"), content: "hi" } },
          { event: "tool_call", tool: "mcp__fs__read_text_file", args: { path: join(root, "docs", "notes.txt") } },
          invoke("mcp__fs__read_text_file", { path: join(outside, "secret.txt") })
        )
      })
      expect(r.code, r.stderr).toBe(0)
      const [list, read, write, readCall, refused] = jsonLines(r.stdout) as Array<Line>
      const tools = list?.["tools"] as Array<{ name: string; description: string; input_schema: Line }>
      const names = tools.map((t) => t.name)
      expect(names).toEqual(
        expect.arrayContaining(["mcp__fs__read_text_file", "mcp__fs__write_file", "mcp__fs__list_directory"])
      )
      expect(names.every((n) => n.startsWith("mcp__fs__"))).toBe(true)
      const readTool = tools.find((t) => t.name === "mcp__fs__read_text_file")
      expect(readTool?.description).not.toBe("")
      expect(readTool?.input_schema).toMatchObject({ type: "object", properties: { path: { type: "string" } } })
      expect(read).toMatchObject({ event: "invoke_tool", is_error: false })
      expect(JSON.stringify(read?.["result"])).toContain("the notes")
      expect(write).toMatchObject({ event: "tool_call", decision: "deny" })
      expect(JSON.stringify(write?.["reasons"])).toContain("mcp__fs__write_file is not allowed")
      expect(readCall).toMatchObject({ event: "tool_call", decision: "allow" })
      expect(refused).toMatchObject({ event: "invoke_tool", is_error: true })
      expect(String(refused?.["result"])).toMatch(/outside allowed directories|access denied/i)
      expect(String(refused?.["result"])).not.toContain("not for the model")
      expect(existsSync(join(root, "x.txt"))).toBe(false)
    },
    Slow
  )
})

describe.concurrent("abhed-ext mcp: server-everything", () => {
  it(
    "a tool's error is a failed tool result, and a call past --timeout-ms fails saying so while the next call works",
    async ({ expect }) => {
      const config = writeConfig({
        extensions: [adapterExtension("ev", [everythingServer, "stdio"], { timeoutMs: 5000 })]
      })
      const r = await runCli(["run", "--config", config], {
        input: lines(
          invoke("mcp__ev__get-sum", { a: "one", b: 2 }),
          invoke("mcp__ev__trigger-long-running-operation", { duration: 60, steps: 2 }),
          invoke("mcp__ev__echo", { message: "still here" }),
          invoke("mcp__ev__get-structured-content", { location: "Chicago" })
        )
      })
      expect(r.code, r.stderr).toBe(0)
      const [toolError, long, echo, structured] = jsonLines(r.stdout) as Array<Line>
      expect(toolError).toMatchObject({ event: "invoke_tool", is_error: true })
      expect(String(toolError?.["result"])).not.toBe("")
      expect(long).toMatchObject({ event: "invoke_tool", is_error: true })
      expect(String(long?.["result"])).toContain("within 5000 ms (--timeout-ms)")
      expect(echo).toMatchObject({ event: "invoke_tool", is_error: false })
      expect(String(echo?.["result"])).toContain("still here")
      expect(structured).toMatchObject({ event: "invoke_tool", is_error: false })
      expect(typeof structured?.["result"]).toBe("object")
    },
    Slow
  )
})
