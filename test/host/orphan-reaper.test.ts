import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { describe, expect, it } from "vitest"
import { bin } from "../support/cli-helpers.ts"
import { fixture, isLive } from "../support/extension-helpers.ts"
import { killedAfterEach } from "../support/leftovers.ts"

/**
 * A host killed outright (SIGKILL, the OOM killer) runs no close sequence: its extensions' groups are ended by the
 * watcher of orphans it started (packages/host/src/OrphanReaper.ts, docs/failures.md), an extension that ignores
 * both the end of its stdin and SIGTERM included, and the child it started with it. A group the host has seen end is
 * struck off and never signalled.
 */

const leftovers = killedAfterEach()

/** Polls until `done` holds, bounded at `millis` (generous: a loaded machine schedules late, never wrongly). */
const eventually = async (done: () => boolean, millis = 30_000): Promise<boolean> => {
  const deadline = Date.now() + millis
  while (!done()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}

const readyLine = async (stdout: NodeJS.ReadableStream) => {
  for await (const line of createInterface({ input: stdout })) {
    if (line.startsWith("ready ")) return JSON.parse(line.slice("ready ".length)) as unknown
  }
  throw new Error("the agent ended before it was ready")
}

/** SIGKILLs `host`, then waits (bounded) for its extension and the extension's child to be gone. */
const expectEndedWith = async (host: ChildProcess, extension: number, child: number) => {
  host.kill("SIGKILL")
  const gone = await eventually(() => !isLive(extension) && !isLive(child))
  expect(gone, `left running: extension ${extension} ${isLive(extension)}, its child ${child} ${isLive(child)}`).toBe(
    true
  )
}

describe("the watcher of orphans", () => {
  it("SIGKILL of an embedding agent: its extension that ignores stdin's end and SIGTERM, and its child, are killed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-orphans-"))
    const childFile = join(dir, "child.pid")
    const config = JSON.stringify({
      extensions: [
        {
          name: "stubborn",
          command: "bash",
          args: [fixture("orphan-ext.sh")],
          grace_ms: 200,
          env: { CHILD_PID_FILE: childFile }
        }
      ]
    })
    writeFileSync(join(dir, "abhed.json"), config)
    const agent = spawn(process.execPath, [fixture("embed-signals-agent.ts"), config, dir], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    if (agent.pid !== undefined) leftovers.push(agent.pid)
    const pids = await readyLine(agent.stdout)
    expect(Array.isArray(pids)).toBe(true)
    const extension = Array.isArray(pids) && typeof pids[0] === "number" ? pids[0] : -1
    const child = Number(readFileSync(childFile, "utf8"))
    leftovers.push(extension, child)
    expect(isLive(extension) && isLive(child)).toBe(true)
    await expectEndedWith(agent, extension, child)
  }, 60_000)

  it("SIGKILL of `abhed-ext run`: its extension that ignores stdin's end and SIGTERM, and its child, are killed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-orphans-"))
    const paths = { config: join(dir, "abhed.json"), self: join(dir, "self.pid"), child: join(dir, "child.pid") }
    writeFileSync(
      paths.config,
      JSON.stringify({
        extensions: [
          {
            name: "stubborn",
            command: "bash",
            args: [fixture("orphan-ext.sh")],
            grace_ms: 200,
            env: { CHILD_PID_FILE: paths.child, SELF_PID_FILE: paths.self }
          }
        ]
      })
    )
    const cli = spawn(process.execPath, [bin, "run", "--config", paths.config], { stdio: ["pipe", "pipe", "ignore"] })
    if (cli.pid !== undefined) leftovers.push(cli.pid)
    // `run` starts its extensions with its first line; its input stays open, as an agent's would. Its decision
    // printed, the extension has started and answered.
    cli.stdin.write(`${JSON.stringify({ event: "tool_call", tool: "bash", args: { command: "ls" } })}\n`)
    const decided = await new Promise<string>((resolve) => createInterface({ input: cli.stdout }).once("line", resolve))
    expect(JSON.parse(decided)).toMatchObject({ event: "tool_call", decision: "allow" })
    const extension = Number(readFileSync(paths.self, "utf8"))
    const child = Number(readFileSync(paths.child, "utf8"))
    leftovers.push(extension, child)
    await expectEndedWith(cli, extension, child)
  }, 60_000)

  it("a group struck off is not signalled; a listed one is ended; the watcher then exits", async () => {
    const agent = spawn(process.execPath, [fixture("orphan-reaper-agent.ts")], { stdio: ["ignore", "pipe", "inherit"] })
    const ready = (await readyLine(agent.stdout)) as { watched: number; forgotten: number; reaper: number }
    leftovers.push(ready.watched, ready.forgotten, ready.reaper)
    expect(typeof ready.reaper).toBe("number")
    // The watcher's own exit comes after its last signal: from then on nothing else can be sent.
    expect(await eventually(() => !isLive(ready.reaper) && !isLive(ready.watched))).toBe(true)
    expect(isLive(ready.forgotten)).toBe(true)
  }, 60_000)
})
