import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { describe, expect, it } from "vitest"
import { fixture, isLive } from "../support/extension-helpers.ts"
import { faultyServer } from "../support/mcp-helpers.ts"
import { killedAfterEach } from "../support/leftovers.ts"

/**
 * An agent that embeds the host (NodeRuntime.runMain, as docs/embedding.md's examples do) and is sent a signal:
 * SIGINT and SIGTERM interrupt it, and SIGHUP (a closed terminal) and SIGQUIT, which end a Node process outright
 * by default, are raised again as SIGTERM while an extension runs. Either way the close sequence runs: the
 * extension gets session_end, and the child it started is ended with its group.
 */

const leftovers = killedAfterEach()

const exited = (child: ReturnType<typeof spawn>) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode)
    else child.on("exit", (code) => resolve(code))
  })

/** The agent's "ready" line (its logs go to stdout too), with its extensions' pids. */
const readyLine = async (lines: AsyncIterator<string>): Promise<Array<number>> => {
  for (;;) {
    const next = await lines.next()
    if (next.done === true) throw new Error("the agent ended before it was ready")
    if (next.value.startsWith("ready ")) return JSON.parse(next.value.slice("ready ".length))
  }
}

describe("an embedding agent under signals", () => {
  it.each(["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const)(
    "%s: session_end sent, the extension's child ended, exit 130",
    async (signal) => {
      const dir = mkdtempSync(join(tmpdir(), "abhed-embed-sig-"))
      const paths = { child: join(dir, "child.pid"), log: join(dir, "requests.log") }
      const config = JSON.stringify({
        extensions: [
          {
            name: "sig",
            command: "bash",
            args: [fixture("sig-ext.sh")],
            grace_ms: 300,
            env: { CHILD_PID_FILE: paths.child, REQUEST_LOG: paths.log, ESCAPE: "0" }
          }
        ]
      })
      writeFileSync(join(dir, "abhed.json"), config)
      const agent = spawn(process.execPath, [fixture("embed-signals-agent.ts"), config, dir], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      const lines = createInterface({ input: agent.stdout })[Symbol.asyncIterator]()
      await readyLine(lines)
      const grandchild = Number(readFileSync(paths.child, "utf8"))
      leftovers.push(grandchild)
      expect(isLive(grandchild)).toBe(true)
      agent.kill(signal)
      // Before, SIGHUP and SIGQUIT killed the agent with no finalizer: no session_end, the child orphaned.
      expect(await exited(agent)).toBe(130)
      const events = existsSync(paths.log)
        ? readFileSync(paths.log, "utf8")
            .split("\n")
            .filter((l) => l !== "")
            .map((l) => String(JSON.parse(l).event))
        : []
      expect(events).toEqual(["session_start", "list_tools", "tool_call", "session_end"])
      expect(isLive(grandchild), `the extension's child ${grandchild} was orphaned`).toBe(false)
    },
    60_000
  )

  it("SIGHUP with an MCP server run by the host that ignores its stdin's end and SIGTERM: it is killed too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-embed-sig-"))
    const config = JSON.stringify({
      extensions: [
        {
          name: "stubborn",
          command: process.execPath,
          args: [faultyServer, "--ignore-eof"],
          protocol: "mcp",
          startup_timeout_ms: 60_000,
          timeout_ms: 60_000,
          grace_ms: 300
        }
      ]
    })
    const agent = spawn(process.execPath, [fixture("embed-signals-agent.ts"), config, dir], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    if (agent.pid !== undefined) leftovers.push(agent.pid)
    const pids = await readyLine(createInterface({ input: agent.stdout })[Symbol.asyncIterator]())
    leftovers.push(...pids)
    expect(pids).toHaveLength(1)
    for (const pid of pids) expect(isLive(pid)).toBe(true)
    agent.kill("SIGHUP")
    expect(await exited(agent)).toBe(130)
    for (const pid of pids) expect(isLive(pid), `the MCP server ${pid} outlived the agent`).toBe(false)
  }, 60_000)
})
