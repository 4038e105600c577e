import { spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { fixtures, repoRoot, start } from "./ExtensionProcess.ts"

/**
 * `Extension.main` attacked through its stdin and stdout, as a broken or hostile host (or anything else writing to
 * an extension's stdin) could: huge lines, a last line without its end, bytes that are not UTF-8, JSON with
 * duplicate keys or `__proto__`, events no handler takes, handlers that throw, reject or never settle, a reader that
 * goes away, SIGTERM mid-handler. Every request it can answer gets exactly one well-formed reply; nothing crashes it;
 * it ends cleanly, and says why when it ends with requests unanswered.
 */

const extension = `${fixtures}attack-extension.ts`

const call = (id: number, tool: string, args: unknown = {}) =>
  JSON.stringify({ event: "tool_call", id, session_id: "s", call_id: `c-${id}`, tool, args })

/** Spawns the fixture with stdio of its own, for what `start` does not do (close its stdout, signal it). */
const spawnExtension = () => spawn(process.execPath, [extension], { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] })

const exited = (child: ReturnType<typeof spawnExtension>) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal }))
  )

describe("Extension.main under attack (real child process)", () => {
  it("answers each request exactly once: a 32 MB line, bad UTF-8, __proto__ and duplicate keys, odd events, a throw, a rejection, a last line without its end", async () => {
    const ext = start("node", [extension])
    const huge = "y".repeat(32 * 1024 * 1024)
    ext.write(`${call(1, "x", { command: huge })}\n`)
    // Not UTF-8 (a lone continuation byte, an invalid lead, a truncated sequence): decoded as U+FFFD, not a crash.
    ext.write(
      Buffer.concat([
        Buffer.from(`${call(2, "x", { command: "rm" }).slice(0, -3)}`),
        Buffer.from([0x80, 0xff, 0xc3]),
        Buffer.from('"}}\n')
      ])
    )
    ext.write(
      '{"event":"tool_call","id":3,"session_id":"s","call_id":"c-3","tool":"x","args":{"__proto__":{"command":"rm -rf /"}}}\n'
    )
    ext.write(
      '{"event":"tool_call","id":4,"session_id":"s","call_id":"c-4","tool":"x","args":{"command":"ls","command":"rm -rf /"}}\n'
    )
    ext.write('{"event":"__proto__","id":5}\n{"event":"constructor","id":6}\n{"event":"from_a_newer_host","id":7}\n')
    ext.write(`${call(8, "throw")}\n${call(9, "reject")}\n`)
    ext.write(call(10, "x", { command: "last" }))
    const done = await ext.close()
    expect(done.code).toBe(0)
    expect(done.stdout.endsWith("\n")).toBe(true)
    expect(
      done.stdout
        .split("\n")
        .slice(0, -1)
        .map((l) => JSON.parse(l))
    ).toEqual([
      { block: true, reason: `keys=command command=long length=${huge.length}`, id: 1 },
      { block: true, reason: "keys=command command=rm\ufffd\ufffd\ufffd length=5", id: 2 },
      // An own key named __proto__, never the prototype: `args.command` is not what it holds.
      { block: true, reason: "keys=__proto__ command=none length=0", id: 3 },
      // JSON.parse's rule, as the host's: the last of duplicate keys wins.
      { block: true, reason: "keys=command command=rm -rf / length=8", id: 4 },
      // Events it has no handler for, or does not know: no opinion.
      { id: 5 },
      { id: 6 },
      { id: 7 },
      // Its own code failed: it says it could not answer, and the host applies its on_failure.
      { failed: "the tool_call handler failed (its error is on the extension's stderr)", id: 8 },
      { failed: "the tool_call handler failed (its error is on the extension's stderr)", id: 9 },
      { block: true, reason: "keys=command command=last length=4", id: 10 }
    ])
  })

  it("exits 0, quietly, when the host stops reading its stdout (EPIPE)", async () => {
    const child = spawnExtension()
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.stdout.destroy()
    const end = exited(child)
    child.stdin.write(`${call(1, "x", { command: "ls" })}\n${call(2, "slow")}\n`)
    child.stdin.end(`${call(3, "x", { command: "ls" })}\n`)
    expect(await end).toEqual({ code: 0, signal: null })
    expect(stderr).toBe("")
  })

  it("SIGTERM mid-handler ends it by the signal, with the replies before whole and no partial line", async () => {
    const child = spawnExtension()
    let stdout = ""
    const first = new Promise<void>((resolve) =>
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d
        if (stdout.includes("\n")) resolve()
      })
    )
    const hanging = new Promise<void>((resolve) =>
      child.stderr.setEncoding("utf8").on("data", (d: string) => d.includes("attack: hanging") && resolve())
    )
    const end = exited(child)
    child.stdin.write(`${call(1, "x", { command: "ls" })}\n`)
    await first
    child.stdin.write(`${call(2, "hang")}\n`)
    await hanging
    child.kill("SIGTERM")
    expect(await end).toEqual({ code: null, signal: "SIGTERM" })
    expect(stdout).toBe('{"block":true,"reason":"keys=command command=ls length=2","id":1}\n')
  })

  it("stdin closes while a handler never settles: the requests left unanswered are said on stderr, exit 1 (not 0)", async () => {
    const ext = start("node", [extension])
    expect(await ext.send(JSON.parse(call(1, "x", { command: "ls" })))).toEqual({
      block: true,
      reason: "keys=command command=ls length=2",
      id: 1
    })
    ext.write(`${call(2, "hang")}\n${call(3, "x", { command: "ls" })}\n`)
    const done = await ext.close()
    expect(done.code).toBe(1)
    expect(done.stdout.split("\n")).toHaveLength(2)
    expect(done.stderr.trimEnd().split("\n").at(-1)).toMatch(
      /a handler never settled.*2 requests? (were )?not answered/
    )
  })
})
