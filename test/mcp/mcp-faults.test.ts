import { spawn } from "node:child_process"
import { describe, type ExpectStatic, it } from "vitest"
import { join } from "node:path"
import { bin, jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"
import { exists, Patient } from "../support/extension-helpers.ts"
import { adapterExtension, faultyServer, invoke, lines, PatientAdapter, writeConfig } from "../support/mcp-helpers.ts"

/**
 * `abhed-ext mcp` when its server misbehaves (docs/mcp.md#faults), over test/fixtures/mcp/faulty-server.mjs: each
 * fault is a failed tool result that says why, the session goes on, nothing hangs, and the server never outlives
 * the adapter. The server's environment is the adapter's, which follows the extension's env rules. Every test has
 * its own config, processes and pids and mostly waits (a start, a timeout, a grace): all of them run at once.
 */

type Line = Record<string, unknown>
const Slow = 180_000

/** Polls (bounded) until `pid` is gone: a killed child is reaped by init a moment after its parent exits. */
const gone = async (pid: number): Promise<boolean> => {
  const deadline = Date.now() + Patient.timeout_ms
  while (exists(pid)) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}

const pidOf = (expect: ExpectStatic, line: Line | undefined): number => {
  const result = line?.["result"] as { pid?: unknown } | undefined
  expect(typeof result?.pid).toBe("number")
  return Number(result?.pid)
}

const faulty = (timeoutMs?: number, extra?: Record<string, unknown>) =>
  writeConfig({
    extensions: [
      adapterExtension("f", [faultyServer], {
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        ...(extra === undefined ? {} : { extra })
      })
    ]
  })

describe.concurrent("abhed-ext mcp: faults are failed tool results, and the session goes on", () => {
  it(
    "names mapped and skipped; a refusal, a tool error, an oversized result: each a failed result, then a call works",
    async ({ expect }) => {
      const r = await runCli(["run", "--config", faulty()], {
        input: lines(
          { event: "list_tools" },
          invoke("mcp__f__refuse"),
          invoke("mcp__f__fail"),
          invoke("mcp__f__huge"),
          invoke("mcp__f__echo", { text: "after" }),
          invoke("mcp__f__dotted_name")
        )
      })
      expect(r.code, r.stderr).toBe(0)
      const [list, refuse, fail, huge, echo, dotted] = jsonLines(r.stdout) as Array<Line>
      const names = (list?.["tools"] as Array<{ name: string }>).map((t) => t.name)
      expect(names).toContain("mcp__f__dotted_name")
      expect(names).toContain("mcp__f__echo")
      expect(names.some((n) => n.includes("xxxxxxxx"))).toBe(false)
      expect(refuse).toEqual({
        event: "invoke_tool",
        is_error: true,
        result: "the MCP server refused the call (JSON-RPC error -32602): refused: bad arguments"
      })
      expect(fail).toEqual({ event: "invoke_tool", is_error: true, result: "the tool failed on purpose" })
      expect(huge).toMatchObject({ event: "invoke_tool", is_error: true })
      expect(String(huge?.["result"])).toContain("1.5 MiB, over the limit of 1.0 MiB")
      expect(echo).toEqual({ event: "invoke_tool", is_error: false, result: `{"text":"after"}` })
      expect(dotted).toEqual({ event: "invoke_tool", is_error: false, result: "called dotted.name" })
    },
    Slow
  )

  it(
    "a call that hangs: failed past --timeout-ms and cancelled, and the next call works",
    async ({ expect }) => {
      const r = await runCli(["run", "--config", faulty(5000)], {
        input: lines(invoke("mcp__f__hang"), invoke("mcp__f__echo", { text: "after" }))
      })
      expect(r.code, r.stderr).toBe(0)
      expect(jsonLines(r.stdout)).toEqual([
        {
          event: "invoke_tool",
          is_error: true,
          result: "no answer from the MCP server within 5000 ms (--timeout-ms); the call was cancelled"
        },
        { event: "invoke_tool", is_error: false, result: `{"text":"after"}` }
      ])
    },
    Slow
  )

  it(
    "a server that dies mid-call: this call and the next fail naming the exit, the session goes on",
    async ({ expect }) => {
      const r = await runCli(["run", "--config", faulty()], {
        input: lines(invoke("mcp__f__die"), invoke("mcp__f__echo", { text: "again" }), {
          event: "tool_call",
          tool: "bash",
          args: { command: "ls" }
        })
      })
      expect(r.code, r.stderr).toBe(0)
      const [die, again, call] = jsonLines(r.stdout) as Array<Line>
      expect(die).toMatchObject({ event: "invoke_tool", is_error: true })
      // Its exit, unless the machine is so slow that its stdout closing is seen a second before it.
      expect(String(die?.["result"])).toMatch(
        /^the connection to the MCP server is lost \(it (exited with code 3 \(its stderr is empty\)|closed its stdout)\)$/
      )
      expect(again).toEqual(die)
      expect(call).toMatchObject({ event: "tool_call", decision: "allow" })
    },
    Slow
  )

  it(
    "a server that closes its stdout and runs on: the call fails saying so, not past --timeout-ms",
    async ({ expect }) => {
      const closer = join(repoRoot, "test/fixtures/mcp/stdout-closer.mjs")
      const config = writeConfig({ extensions: [adapterExtension("c", [closer])] })
      const r = await runCli(["run", "--config", config], { input: lines(invoke("mcp__c__close")) })
      expect(r.code, r.stderr).toBe(0)
      expect(jsonLines(r.stdout)).toEqual([
        {
          event: "invoke_tool",
          is_error: true,
          result: "the connection to the MCP server is lost (it closed its stdout)"
        }
      ])
    },
    Slow
  )

  it(
    "a server that writes a line that is not JSON-RPC: a protocol fault, without the line",
    async ({ expect }) => {
      const r = await runCli(["run", "--config", faulty()], {
        input: lines(invoke("mcp__f__garbage"), invoke("mcp__f__echo", { text: "again" }))
      })
      expect(r.code, r.stderr).toBe(0)
      const [garbage, again] = jsonLines(r.stdout) as Array<Line>
      expect(garbage).toMatchObject({ event: "invoke_tool", is_error: true })
      expect(String(garbage?.["result"])).toContain("the MCP server broke the protocol")
      expect(String(garbage?.["result"])).not.toContain("this is not JSON-RPC")
      expect(again).toMatchObject({ event: "invoke_tool", is_error: true })
    },
    Slow
  )

  it(
    "a server that cannot start: no tools declared, the cause on the adapter's stderr, the session goes on",
    async ({ expect }) => {
      const config = writeConfig({
        extensions: [
          { ...adapterExtension("nope", []), args: [bin, "mcp", "--name", "nope", "--", "/nonexistent/mcp-server"] }
        ]
      })
      const r = await runCli(["--log-level", "debug", "run", "--config", config], {
        input: lines({ event: "list_tools" }, { event: "tool_call", tool: "bash", args: { command: "ls" } })
      })
      expect(r.code, r.stderr).toBe(0)
      const [list, call] = jsonLines(r.stdout) as Array<Line>
      expect(list).toEqual({ event: "list_tools", tools: [] })
      expect(call).toMatchObject({ event: "tool_call", decision: "allow" })
      expect(r.stderr).toContain("the MCP server did not start")
      expect(r.stderr).toContain("no tools declared")
    },
    Slow
  )
})

describe.concurrent("abhed-ext mcp: the server's environment is the extension's", () => {
  const token = { MCP_TEST_TOKEN: "tok-7f3a" }
  it(
    "a token reaches the server only when the config passes it",
    async ({ expect }) => {
      const request = lines(invoke("mcp__f__env", { name: "MCP_TEST_TOKEN" }))
      const [without, passed] = await Promise.all([
        runCli(["run", "--config", faulty()], { input: request, env: token }),
        runCli(["run", "--config", faulty(undefined, { env_passthrough: ["MCP_TEST_TOKEN"] })], {
          input: request,
          env: token
        })
      ])
      expect(without.code, without.stderr).toBe(0)
      expect(passed.code, passed.stderr).toBe(0)
      expect(jsonLines(without.stdout)).toEqual([{ event: "invoke_tool", is_error: false, result: "(unset)" }])
      expect(jsonLines(passed.stdout)).toEqual([{ event: "invoke_tool", is_error: false, result: "tok-7f3a" }])
    },
    Slow
  )
})

describe.concurrent("abhed-ext mcp: the server ends with the adapter", () => {
  it(
    "through abhed-ext run: once the run ends, the server's pid is gone",
    async ({ expect }) => {
      const r = await runCli(["run", "--config", faulty()], { input: lines(invoke("mcp__f__pid")) })
      expect(r.code, r.stderr).toBe(0)
      expect(await gone(pidOf(expect, jsonLines(r.stdout)[0] as Line))).toBe(true)
    },
    Slow
  )

  /** The adapter on its own: requests on stdin, the reply to the `pid` call read, then `end` done to it. */
  const standalone = async (
    expect: ExpectStatic,
    serverArgs: ReadonlyArray<string>,
    end: (child: ReturnType<typeof spawn>) => void,
    detached = false
  ) => {
    const child = spawn(
      process.execPath,
      [
        bin,
        "mcp",
        "--name",
        "f",
        "--startup-timeout-ms",
        String(PatientAdapter.startupTimeoutMs),
        "--timeout-ms",
        String(PatientAdapter.timeoutMs),
        "--",
        process.execPath,
        faultyServer,
        ...serverArgs
      ],
      { stdio: ["pipe", "pipe", "pipe"], detached }
    )
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    let out = ""
    const replies = new Promise<Array<Line>>((resolve) => {
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        out += d
        const got = out.split("\n").filter((l) => l.trim() !== "")
        if (got.length === 2) resolve(got.map((l) => JSON.parse(l)))
      })
    })
    child.stderr.resume()
    child.stdin.write(
      lines(
        { event: "list_tools", session_id: "s", id: "1" },
        { event: "invoke_tool", session_id: "s", id: "2", call_id: "c", tool: "mcp__f__pid", args: {} }
      )
    )
    const pid = pidOf(expect, (await replies)[1])
    expect(exists(pid)).toBe(true)
    end(child)
    await exited
    return pid
  }

  it(
    "stdin closed: the adapter exits and its server with it",
    async ({ expect }) => {
      const pid = await standalone(expect, [], (child) => child.stdin?.end())
      expect(await gone(pid)).toBe(true)
    },
    Slow
  )

  it(
    "SIGTERM to the adapter: its server is gone, even one that ignores stdin's end and SIGTERM",
    async ({ expect }) => {
      const pid = await standalone(expect, ["--ignore-eof"], (child) => child.kill("SIGTERM"))
      expect(await gone(pid)).toBe(true)
    },
    Slow
  )

  it(
    "SIGKILL to the adapter's process group, as the host ends an extension: the server is in it, and gone",
    async ({ expect }) => {
      const pid = await standalone(
        expect,
        ["--ignore-eof"],
        (child) => process.kill(-(child.pid ?? 0), "SIGKILL"),
        true
      )
      expect(await gone(pid)).toBe(true)
    },
    Slow
  )
})
