import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { within } from "../support/extension-helpers.ts"
import { faultFixture } from "../support/fault-cell.ts"
import { fuzzLine } from "../support/fuzz-lines.ts"

/**
 * Fuzzing `abhed-ext run`'s input lines (issue 25): one `run` process, a guard that denies every call, marks every
 * result an error and keeps no message (`on_failure: "deny"`), and random or mutated request lines, each followed by
 * a sentinel line. For each fuzzed line: the run goes on (the sentinel is answered), at most one output line comes,
 * it is JSON, never an internal error, and never looser than the guard (a decided tool_call is denied, a tool_result
 * an error, a context keeps nothing), in bounded time. The run exits 0. `ABHED_FULL=1` runs thousands of lines.
 */

const full = process.env["ABHED_FULL"] === "1"
const lines = full ? 5000 : 60
const seed = process.env["ABHED_SEED"] !== undefined ? Number(process.env["ABHED_SEED"]) : Date.now() % 1_000_000

const bin = NodePath.join(import.meta.dirname, "..", "..", "packages", "cli", "src", "bin.ts")

const valid = [
  `{"event":"tool_call","tool":"bash","args":{"command":"ls"}}`,
  `{"event":"tool_call","call_id":"c9","session_id":"s","tool":"read","args":{"path":"x","n":[1,2]}}`,
  `{"event":"tool_result","tool":"bash","args":{"command":"ls"},"content":"out","is_error":false}`,
  `{"event":"context","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`,
  `{"event":"before_compact","messages":[{"role":"user","content":"h"}]}`,
  `{"event":"before_agent_start","system":"s"}`,
  `{"event":"invoke_tool","tool":"tool_guard","args":{}}`,
  `{"event":"list_tools"}`
]

const guardConfig = (dir: string): string => {
  const file = NodePath.join(dir, "abhed.json")
  NodeFs.writeFileSync(
    file,
    JSON.stringify({
      extensions: [
        {
          name: "guard",
          command: "bash",
          args: [faultFixture, "none", "none"],
          env: {
            EXT_NAME: "guard",
            REPLY_tool_call: `"block":true,"reason":"guard"`,
            REPLY_tool_result: `"is_error":true`,
            REPLY_context: `"keep":[]`
          },
          on_failure: "deny",
          reply_ids: "required",
          timeout_ms: 15_000,
          startup_timeout_ms: 30_000,
          grace_ms: 300
        }
      ]
    })
  )
  return file
}

/** The output lines of a child, one promise per line. */
const lineReader = (child: NodeChildProcess.ChildProcessWithoutNullStreams) => {
  const ready: Array<string> = []
  const waiting: Array<(line: string | undefined) => void> = []
  let buffer = ""
  let ended = false
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk
    let nl: number
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      const w = waiting.shift()
      if (w !== undefined) w(line)
      else ready.push(line)
    }
  })
  child.stdout.on("end", () => {
    ended = true
    for (const w of waiting.splice(0)) w(undefined)
  })
  return (): Promise<string | undefined> => {
    const line = ready.shift()
    if (line !== undefined || ended) return Promise.resolve(line)
    return new Promise((resolve) => waiting.push(resolve))
  }
}

const parse = (line: string): Record<string, unknown> | undefined => {
  try {
    const v: unknown = JSON.parse(line)
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** What a fuzzed line's output may not be. */
const problemsOf = (out: Record<string, unknown> | undefined, text: string): ReadonlyArray<string> => {
  if (out === undefined) return [`not a JSON object: ${text.slice(0, 200)}`]
  if (typeof out["error"] === "string" && out["error"].startsWith("internal error"))
    return [`internal error: ${out["error"]}`]
  switch (out["event"]) {
    case "tool_call":
      return out["decision"] === "deny" ? [] : [`looser than the guard: ${text.slice(0, 200)}`]
    case "tool_result":
      return out["is_error"] === true ? [] : [`looser than the guard: ${text.slice(0, 200)}`]
    case "context":
      return Array.isArray(out["keep"]) && out["keep"].length === 0
        ? []
        : [`looser than the guard: ${text.slice(0, 200)}`]
    default:
      return []
  }
}

describe("fuzzing abhed-ext run's input", () => {
  it(
    `random and mutated request lines (${lines} lines, seed ${seed})`,
    async () => {
      const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-fuzz-run-"))
      const child = NodeChildProcess.spawn(process.execPath, [bin, "run", "-c", guardConfig(dir), "-"], {
        stdio: ["pipe", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.setEncoding("utf8")
      child.stderr.on("data", (chunk: string) => {
        stderr = (stderr + chunk).slice(-4000)
      })
      const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
      const next = lineReader(child)
      const fuzzed = fc.sample(fuzzLine(valid), { numRuns: lines, seed })
      const problems: Array<string> = []
      for (const [i, bytes] of fuzzed.entries()) {
        const sentinel = `sentinel-${i}`
        const started = Date.now()
        child.stdin.write(
          Buffer.concat([bytes, Buffer.from(`\n{"event":"before_agent_start","system":"${sentinel}"}\n`)])
        )
        const outputs: Array<string> = []
        for (;;) {
          const line = await next()
          if (line === undefined) {
            problems.push(`#${i}: the run ended (${stderr.slice(-500)})`)
            break
          }
          if (line.includes(sentinel)) break
          outputs.push(line)
        }
        const shown = JSON.stringify(Buffer.from(bytes).toString("latin1").slice(0, 160))
        if (outputs.length > 1) problems.push(`#${i} ${shown}: ${outputs.length} output lines`)
        for (const o of outputs) for (const p of problemsOf(parse(o), o)) problems.push(`#${i} ${shown}: ${p}`)
        const millis = Date.now() - started
        if (millis > within(1000)) problems.push(`#${i} ${shown}: took ${millis} ms`)
        if (problems.some((p) => p.includes("the run ended"))) break
      }
      child.stdin.end()
      const code = await exited
      if (code !== 0) problems.push(`exit code ${code}: ${stderr.slice(-500)}`)
      NodeFs.rmSync(dir, { recursive: true, force: true })
      if (problems.length > 0) assert.fail(`seed ${seed}:\n${problems.slice(0, 10).join("\n")}`)
    },
    full ? 3_600_000 : 120_000
  )
})
