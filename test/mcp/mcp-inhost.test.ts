import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"
import { Patient } from "../support/extension-helpers.ts"
import {
  everythingServer,
  faultyServer,
  filesystemServer,
  guardExtension,
  inHostExtension,
  invoke,
  lines,
  writeConfig
} from "../support/mcp-helpers.ts"

/**
 * MCP servers the host speaks to itself (`"protocol": "mcp"`, docs/mcp.md) through `abhed-ext run`, against the real
 * servers from the registry and test/fixtures/mcp/faulty-server.mjs: no adapter process, the same tools, guards,
 * faults and clean end as through `abhed-ext mcp`. Every test has its own config and processes: both groups run at
 * once (consecutive concurrent describes), each test asserting with its own `expect`.
 */

type Line = Record<string, unknown>
const Slow = 180_000

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Polls (bounded) until `pid` is gone. */
const gone = async (pid: number): Promise<boolean> => {
  const deadline = Date.now() + Patient.timeout_ms
  while (alive(pid)) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}

describe.concurrent("protocol mcp: real servers through abhed-ext run", () => {
  it(
    "server-filesystem: lists its tools, reads a file, a guard denies mcp__fs__write_file, a path outside is refused",
    async ({ expect }) => {
      const root = realpathSync(mkdtempSync(join(tmpdir(), "abhed-mcp-inhost-")))
      mkdirSync(join(root, "docs"))
      writeFileSync(join(root, "docs", "notes.txt"), "the notes\n")
      const outside = realpathSync(mkdtempSync(join(tmpdir(), "abhed-mcp-inhost-outside-")))
      writeFileSync(join(outside, "secret.txt"), "not for the model\n")
      const config = writeConfig({
        extensions: [inHostExtension("fs", [filesystemServer, root]), guardExtension("^mcp__fs__write_file$")]
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
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(["mcp__fs__read_text_file", "mcp__fs__write_file", "mcp__fs__list_directory"])
      )
      expect(tools.find((t) => t.name === "mcp__fs__read_text_file")?.input_schema).toMatchObject({
        type: "object",
        properties: { path: { type: "string" } }
      })
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

  it(
    "server-everything: a tool's error is a failed result; a call past four fifths of timeout_ms fails, the next works",
    async ({ expect }) => {
      const config = writeConfig({
        extensions: [inHostExtension("ev", [everythingServer, "stdio"], { timeout_ms: 5000 })]
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
      expect(long).toEqual({
        event: "invoke_tool",
        is_error: true,
        result: "no answer from the MCP server within 4000 ms (four fifths of timeout_ms); the call was cancelled"
      })
      expect(echo).toMatchObject({ event: "invoke_tool", is_error: false })
      expect(String(echo?.["result"])).toContain("still here")
      expect(structured).toMatchObject({ event: "invoke_tool", is_error: false })
      expect(typeof structured?.["result"]).toBe("object")
    },
    Slow
  )
})

describe.concurrent("protocol mcp: faults", () => {
  const faulty = (extra: Record<string, unknown> = {}) =>
    writeConfig({ extensions: [inHostExtension("f", [faultyServer], extra), guardExtension("^never$")] })

  it(
    "a refusal, a tool error and an oversized result are failed results; the extension stays live",
    async ({ expect }) => {
      const r = await runCli(["run", "--config", faulty()], {
        input: lines(
          invoke("mcp__f__refuse"),
          invoke("mcp__f__fail"),
          invoke("mcp__f__huge"),
          invoke("mcp__f__echo", { text: "after" })
        )
      })
      expect(r.code, r.stderr).toBe(0)
      expect(jsonLines(r.stdout)).toEqual([
        {
          event: "invoke_tool",
          is_error: true,
          result: "the MCP server refused the call (JSON-RPC error -32602): refused: bad arguments"
        },
        { event: "invoke_tool", is_error: true, result: "the tool failed on purpose" },
        {
          event: "invoke_tool",
          is_error: true,
          result: "the MCP server's result is 1.5 MiB, over the limit of 1.0 MiB; it was dropped"
        },
        { event: "invoke_tool", is_error: false, result: `{"text":"after"}` }
      ])
    },
    Slow
  )

  it(
    "a server that dies mid-call, or breaks the protocol: the extension is dead with that cause, the session goes on",
    async ({ expect }) => {
      const tail = [invoke("mcp__f__echo", { text: "again" }), { event: "tool_call", tool: "bash", args: {} }]
      const [died, garbage] = await Promise.all([
        runCli(["run", "--config", faulty()], { input: lines(invoke("mcp__f__die"), ...tail) }),
        runCli(["run", "--config", faulty()], { input: lines(invoke("mcp__f__garbage"), ...tail) })
      ])
      expect(died.code, died.stderr).toBe(0)
      expect(jsonLines(died.stdout)).toEqual([
        { error: 'tool "mcp__f__die": extension f unavailable: exited (code 3)', line: 1 },
        { error: 'tool "mcp__f__echo": extension f unavailable: exited (code 3)', line: 2 },
        { event: "tool_call", decision: "allow", reasons: [], args: {}, rounds: 1 }
      ])
      expect(garbage.code, garbage.stderr).toBe(0)
      const [broken, again, call] = jsonLines(garbage.stdout) as Array<Line>
      expect(String(broken?.["error"])).toContain(
        "extension f unavailable: malformed_reply: reply: expected one JSON-RPC message per line from the MCP server, got invalid JSON (20 bytes)"
      )
      expect(String(broken?.["error"])).not.toContain("this is not JSON-RPC")
      expect(String(again?.["error"])).toContain("extension f unavailable: malformed_reply")
      expect(call).toMatchObject({ event: "tool_call", decision: "allow" })
    },
    Slow
  )

  it(
    "a server that closes its stdout and runs on: dead at once saying so, not when the call's bound runs out",
    async ({ expect }) => {
      const closer = join(repoRoot, "test/fixtures/mcp/stdout-closer.mjs")
      const config = writeConfig({ extensions: [inHostExtension("c", [closer])] })
      const r = await runCli(["run", "--config", config], {
        input: lines(invoke("mcp__c__close"), { event: "tool_call", tool: "bash", args: {} })
      })
      expect(r.code, r.stderr).toBe(0)
      const [closed, call] = jsonLines(r.stdout) as Array<Line>
      // Its bound is 48 s (four fifths of timeout_ms): without the close seen, the call would wait it out and say so.
      expect(String(closed?.["error"])).toContain(
        "extension c unavailable: malformed_reply: reply: expected an MCP server that keeps its stdout open while it runs, got its stdout closed"
      )
      expect(call).toMatchObject({ event: "tool_call", decision: "allow" })
    },
    Slow
  )

  it(
    "a server that fails to start (no such command, or never answers initialize): dead with a clear cause, no tools, the session goes on",
    async ({ expect }) => {
      const config = writeConfig({
        extensions: [
          { name: "nope", command: "/nonexistent/mcp-server", protocol: "mcp", ...Patient },
          {
            name: "mute",
            command: process.execPath,
            args: ["-e", "setInterval(() => {}, 1000)"],
            protocol: "mcp",
            startup_timeout_ms: 2000
          },
          guardExtension("^never$")
        ]
      })
      const r = await runCli(["run", "--config", config], {
        input: lines({ event: "list_tools" }, { event: "tool_call", tool: "bash", args: {} })
      })
      expect(r.code, r.stderr).toBe(0)
      const [list, call] = jsonLines(r.stdout) as Array<Line>
      expect(list).toEqual({ event: "list_tools", tools: [] })
      expect(call).toMatchObject({ event: "tool_call", decision: "allow" })
      expect(r.stderr).toContain("extension nope is dead: spawn_failed: nope: could not start /nonexistent/mcp-server")
      expect(r.stderr).toContain(
        "extension mute is dead: spawn_failed: mute: could not start " +
          `${process.execPath}: the MCP server did not complete its start (initialize) within 1600 ms (four fifths of ` +
          "startup_timeout_ms; raise it for a server slow to start, one npx downloads first say)"
      )
    },
    Slow
  )

  it(
    "the server's environment follows the extension's rules, and the server ends with the run",
    async ({ expect }) => {
      const token = { MCP_TEST_TOKEN: "tok-7f3a" }
      const request = lines(invoke("mcp__f__env", { name: "MCP_TEST_TOKEN" }), invoke("mcp__f__pid"))
      const [without, passed] = await Promise.all([
        runCli(["run", "--config", faulty()], { input: request, env: token }),
        runCli(["run", "--config", faulty({ env_passthrough: ["MCP_TEST_TOKEN"] })], { input: request, env: token })
      ])
      expect(without.code, without.stderr).toBe(0)
      expect(passed.code, passed.stderr).toBe(0)
      const [unset, pid] = jsonLines(without.stdout) as Array<Line>
      expect(unset).toEqual({ event: "invoke_tool", is_error: false, result: "(unset)" })
      expect(jsonLines(passed.stdout)[0]).toEqual({ event: "invoke_tool", is_error: false, result: "tok-7f3a" })
      const serverPid = Number((pid?.["result"] as { pid?: unknown } | undefined)?.pid)
      expect(serverPid).toBeGreaterThan(0)
      expect(await gone(serverPid)).toBe(true)
    },
    Slow
  )
})
