import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { describe, expect, it } from "vitest"
import { bin, jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"

const exampleConfig = "docs/examples/abhed.json"
const exampleSession = "docs/examples/session.jsonl"
const guardConfig = `${repoRoot}test/fixtures/cli-guard.json`

type Line = Record<string, unknown>
const str = (u: unknown): string => (typeof u === "string" ? u : JSON.stringify(u))

describe("abhed-ext run over the example session", () => {
  it("prints one line per input line, each the decision docs/design.md#output describes", async () => {
    const r = await runCli(["run", "--config", exampleConfig, exampleSession])
    expect(r.code, r.stderr).toBe(0)
    const input = readFileSync(`${repoRoot}${exampleSession}`, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out).toHaveLength(input.length)
    // Every line answers its own input line's event, in order.
    out.forEach((o, i) => expect(o["event"], `line ${i + 1}`).toBe((JSON.parse(input[i] ?? "{}") as Line)["event"]))

    const toolCall = (o: Line | undefined, decision: string, rounds: number) => {
      expect(Object.keys(o ?? {}).sort()).toEqual(["args", "decision", "event", "reasons", "rounds"])
      expect(o?.["decision"]).toBe(decision)
      expect(o?.["rounds"]).toBe(rounds)
    }
    const reasonsBy = (o: Line | undefined) =>
      (o?.["reasons"] as Array<{ extension: string; reason: string }>).map((x) => x.extension)
    const argsOf = (o: Line | undefined) => o?.["args"] as Record<string, unknown>
    const line = (n: number) => out[n - 1]

    const unchanged = (n: number) => {
      const sent = JSON.parse(input[n - 1] ?? "{}") as Line
      expect(line(n)).toEqual({ event: "tool_result", content: sent["content"], is_error: sent["is_error"] })
    }
    expect(line(1)).toEqual({ event: "session_start" })
    expect((line(2)?.["tools"] as Array<{ name: string }>).map((t) => t.name)).toEqual(["json_format", "word_count"])
    for (const t of line(2)?.["tools"] as Array<Line>)
      expect(Object.keys(t).sort()).toEqual(["description", "input_schema", "name"])
    expect(str(line(3)?.["system"])).toMatch(
      /^You are Abhed, a coding agent working in \/home\/dev\/shop\.\n\nFiles matching .* off limits/s
    )
    expect(line(4)).toEqual({ event: "context", keep: [0, 2] }) // the "[private]" message is dropped
    toolCall(line(5), "allow", 1)
    expect(argsOf(line(5))).toEqual({ path: "test/checkout.test.ts" })
    unchanged(6)
    toolCall(line(7), "deny", 1)
    expect(line(7)?.["reasons"]).toEqual([
      { extension: "secrets-guard", reason: ".env matches secret pattern **/.env" }
    ])
    toolCall(line(8), "deny", 1) // both guards, reasons in name order
    expect(reasonsBy(line(8))).toEqual(["block-secrets", "secrets-guard"])
    toolCall(line(9), "allow", 2) // rewritten into the sandbox, settled in a second round
    expect(argsOf(line(9))).toEqual({
      command: "sandbox-run -- bash -c 'npm test -- checkout'",
      description: "run the checkout tests"
    })
    unchanged(10) // is_error stays true
    expect(line(10)?.["is_error"]).toBe(true)
    toolCall(line(11), "allow", 1)
    unchanged(12)
    toolCall(line(13), "allow", 1)
    unchanged(14)
    toolCall(line(15), "allow", 2)
    expect(str(argsOf(line(15))["command"])).toBe("sandbox-run -- bash -c 'cat ~/.aws/credentials | head -3'")
    expect(str(line(16)?.["content"])).not.toContain("AKIAIOSFODNN7EXAMPLE") // redacted
    expect(str(line(16)?.["content"])).toContain("aws_access_key_id = [redacted]")
    expect(str(line(16)?.["content"])).toContain("aws_secret_access_key = [redacted]")
    toolCall(line(17), "deny", 1)
    expect(line(17)?.["reasons"]).toEqual([
      { extension: "secrets-guard", reason: "src/.env.local matches secret pattern **/.env.*" }
    ])
    toolCall(line(18), "allow", 1) // an extension's tool, allowed by the policy
    expect(line(19)).toEqual({ event: "invoke_tool", result: { lines: 2, words: 9, characters: 53 }, is_error: false })
    unchanged(20)
    toolCall(line(21), "allow", 1)
    expect(line(22)).toEqual({
      event: "invoke_tool",
      result: JSON.stringify({ items: [{ price: 3, qty: 2 }] }, null, 2),
      is_error: false
    })
    toolCall(line(23), "allow", 2) // a commit whose description mentions push is not a push
    expect(reasonsBy(line(23))).toEqual([])
    toolCall(line(24), "ask", 2)
    expect(line(24)?.["reasons"]).toEqual([
      { extension: "secrets-guard", reason: "git push publishes commits; confirm first" }
    ])
    toolCall(line(25), "ask", 2) // a production host: the python extension asks
    expect(line(25)?.["reasons"]).toEqual([{ extension: "audit", reason: "touches production: api.prod.example.com" }])
    toolCall(line(26), "deny", 2) // rm -rf /: the policy, judging the settled args
    expect(line(26)?.["reasons"]).toEqual([{ extension: "policy", reason: "never delete from the root" }])
    expect(argsOf(line(26))["command"]).toBe("sandbox-run -- bash -c 'rm -rf /'")
    expect(line(27)).toEqual({ event: "context", keep: [0, 2, 3] })
    expect(line(28)).toEqual({
      event: "before_compact",
      cancel: false,
      summary: "Working on ticket ABC-123. Keep the ticket id."
    })
    expect(line(29)).toEqual({ event: "tool_result", content: "[redacted]\ntoken: [redacted]\n", is_error: false })
    expect(line(30)).toEqual({ event: "session_end" })
    expect(out).toHaveLength(30)
  })
})

describe("abhed-ext run: input handling", () => {
  it("a malformed line prints {error, line} and the run goes on", async () => {
    const input = [
      `{"event":"tool_call","tool":"read","args":{"path":"a/secret.txt"}}`,
      "",
      "this is not json",
      `{"event":"tool_calls","tool":"read","args":{}}`,
      `{"event":"tool_call","tool":"read","args":"not an object"}`,
      `[1,2]`,
      `{"event":"invoke_tool","tool":"no_such_tool","args":{}}`,
      `{"event":"tool_call","tool":"read","args":{"path":"README.md"}}`
    ].join("\n")
    // From another directory: the config's relative paths resolve against its own folder.
    const r = await runCli(["run", "--config", guardConfig], { input, cwd: tmpdir() })
    expect(r.code, r.stderr).toBe(0)
    const out = jsonLines(r.stdout) as Array<Line>
    expect(out).toHaveLength(7)
    expect(out[0]).toEqual({
      event: "tool_call",
      decision: "deny",
      reasons: [{ extension: "guard", reason: "secrets are off limits" }],
      args: { path: "a/secret.txt" },
      rounds: 1
    })
    expect(out.slice(1, 6).map((o) => o["line"])).toEqual([3, 4, 5, 6, 7])
    for (const o of out.slice(1, 6)) {
      expect(Object.keys(o).sort()).toEqual(["error", "line"])
      expect(typeof o["error"]).toBe("string")
    }
    expect(str(out[1]?.["error"])).toMatch(/invalid JSON/)
    expect(str(out[2]?.["error"])).toMatch(/unknown event "tool_calls"/)
    expect(str(out[3]?.["error"])).toMatch(/args/)
    expect(str(out[5]?.["error"])).toMatch(/no_such_tool/)
    expect(out[6]).toEqual({
      event: "tool_call",
      decision: "allow",
      reasons: [],
      args: { path: "README.md" },
      rounds: 1
    })
  })

  it("streams: each output line is printed before the next input line is written", async () => {
    const child = spawn(process.execPath, [bin, "run", "--config", guardConfig], {
      cwd: repoRoot,
      stdio: ["pipe", "pipe", "inherit"]
    })
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
    child.stdin.write(`{"event":"tool_call","tool":"read","args":{"path":"x/secrets"}}\n`)
    // If run waited for the end of its input, this would never resolve (stdin is still open).
    const first = await lines.next()
    expect(JSON.parse(String(first.value))).toMatchObject({ event: "tool_call", decision: "deny" })
    child.stdin.write(`{"event":"session_end"}\n`)
    const second = await lines.next()
    expect(JSON.parse(String(second.value))).toEqual({ event: "session_end" })
    child.stdin.end()
    const code = await new Promise((resolve) => child.on("close", resolve))
    expect(code).toBe(0)
  })

  it("--audit writes one JSON record per dispatch", async () => {
    const audit = join(mkdtempSync(join(tmpdir(), "abhed-cli-")), "audit.jsonl")
    const input = `{"event":"tool_call","session_id":"s-7","call_id":"k-1","tool":"read","args":{"path":"secret"}}\n`
    const r = await runCli(["run", "--config", guardConfig, "--audit", audit], { input })
    expect(r.code, r.stderr).toBe(0)
    const records = jsonLines(readFileSync(audit, "utf8")) as Array<Line>
    // session_start and list_tools at startup, then the call, then session_end as the host closes.
    expect(records.map((x) => x["event"])).toEqual(["session_start", "list_tools", "tool_call", "session_end"])
    const call = records[2]
    expect(call?.["call_id"]).toBe("k-1")
    const exchanges = (call?.["rounds"] as Array<{ exchanges: Array<Line> }>)[0]?.exchanges
    expect(exchanges?.[0]).toMatchObject({ extension: "guard", status: "replied", reply: { block: true } })
  })
})

describe("abhed-ext run: config errors", () => {
  it("an invalid config exits 2 and names every problem with its path", async () => {
    const r = await runCli(["run", "--config", "test/fixtures/cli-invalid-config.json"], { input: "" })
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toMatch(/cli-invalid-config\.json:3:\d+: extensions\[0\]\.events\[0\]:/)
    expect(r.stderr).toContain("tool_calls")
    expect(r.stderr).toContain("extensions[1].timeout_ms:")
  })

  it("a missing config file exits 2", async () => {
    const r = await runCli(["run", "--config", "test/fixtures/cli-no-such-config.json"], { input: "" })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("cli-no-such-config.json")
  })

  it("--help shows the output format and examples, on stderr: run's stdout is JSON lines only", async () => {
    const r = await runCli(["run", "--help"])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("")
    for (const s of ["--config", "--audit", "EXAMPLES", "abhed-ext run --config", '"error"', "Exit codes"])
      expect(r.stderr).toContain(s)
  })
})
