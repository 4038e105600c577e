import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bin, repoRoot } from "../support/cli-helpers.ts"
import { fixture, isLive, Patient } from "../support/extension-helpers.ts"
import { killedAfterEach } from "../support/leftovers.ts"

/**
 * `abhed-ext run` ended while an extension holds a request (the decision not made yet): by a signal (exit 130),
 * or by its input ending, as when the agent that feeds it dies (the pending line is still decided, exit 0). Either
 * way the extension's group is ended: the child it started does not outlive the run.
 */

const leftovers = killedAfterEach()

const start = () => {
  const dir = mkdtempSync(join(tmpdir(), "abhed-run-life-"))
  const paths = {
    config: join(dir, "abhed.json"),
    child: join(dir, "child.pid"),
    log: join(dir, "gate.log"),
    release: join(dir, "release")
  }
  writeFileSync(
    paths.config,
    JSON.stringify({
      extensions: [
        {
          name: "gate",
          command: "node",
          args: [fixture("gate-echo.mjs")],
          ...Patient,
          grace_ms: 300,
          env: { CHILD_PID_FILE: paths.child, REQUEST_LOG: paths.log, RELEASE: paths.release }
        }
      ]
    })
  )
  const cli = spawn(process.execPath, [bin, "run", "--config", paths.config], {
    cwd: repoRoot,
    stdio: ["pipe", "pipe", "pipe"]
  })
  const out = { stdout: "", stderr: "" }
  cli.stdout.setEncoding("utf8").on("data", (d: string) => (out.stdout += d))
  cli.stderr.setEncoding("utf8").on("data", (d: string) => (out.stderr += d))
  const exited = new Promise<number | null>((resolve) => cli.on("close", (code) => resolve(code)))
  cli.stdin.write(`{"event":"tool_call","tool":"bash","args":{"command":"hold"},"call_id":"held"}\n`)
  /** Resolves once the extension holds the request (its log names it): the decision cannot have been made. */
  const held = new Promise<void>((resolve, reject) => {
    const poll = () => {
      if (existsSync(paths.log) && readFileSync(paths.log, "utf8").includes("held\n")) return resolve()
      if (cli.exitCode !== null) return reject(new Error(`the run ended first:\n${out.stderr}`))
      setTimeout(poll, 20)
    }
    poll()
  })
  return { cli, out, exited, held, paths }
}

describe("abhed-ext run ended mid-dispatch", () => {
  it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)(
    "%s: exit 130, nothing printed, the extension's child ended",
    async (signal) => {
      const run = start()
      await run.held
      const grandchild = Number(readFileSync(run.paths.child, "utf8"))
      leftovers.push(grandchild)
      expect(isLive(grandchild)).toBe(true)
      run.cli.kill(signal)
      expect(await run.exited).toBe(130)
      expect(run.out.stdout).toBe("")
      expect(isLive(grandchild), `the extension's child ${grandchild} was orphaned`).toBe(false)
    },
    60_000
  )

  it("its input ending (the agent feeding it died): the held line is still decided, exit 0, the child ended", async () => {
    const run = start()
    await run.held
    const grandchild = Number(readFileSync(run.paths.child, "utf8"))
    leftovers.push(grandchild)
    run.cli.stdin.end()
    writeFileSync(run.paths.release, "")
    expect(await run.exited).toBe(0)
    expect(JSON.parse(run.out.stdout)).toMatchObject({
      event: "tool_call",
      decision: "ask",
      reasons: [{ extension: "gate", reason: "gate:held" }]
    })
    expect(isLive(grandchild), `the extension's child ${grandchild} was orphaned`).toBe(false)
  }, 60_000)
})
