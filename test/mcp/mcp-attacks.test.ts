import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { PassThrough } from "node:stream"
import { type McpArgs, parseTarget } from "@abhed/cli/mcp/McpTarget"
import { scriptsOf } from "@abhed/host/Fingerprint"
import * as McpStdio from "@abhed/host/mcp/McpStdio"
import { decodeConfig } from "@abhed/protocol"
import { Effect, Fiber, Result } from "effect"
import { describe, type ExpectStatic, expect, it } from "vitest"
import { readMcpServers } from "../../packages/cli/src/mcp-import/McpServers.ts"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"
import {
  adapterExtension,
  guardExtension,
  inHostExtension,
  invoke,
  lines,
  writeConfig
} from "../support/mcp-helpers.ts"

/**
 * Attacks on bringing MCP servers under the guards: hostile peer settings given to `import-mcp` (credentials hidden
 * in a `${VAR:-default}` or in a URL's user info), and a server that tries to reach the client's calls without a
 * judgment (mcp-attacks-session below).
 */

const launch = { command: "abhed-ext", args: [] }

const imported = (servers: Record<string, unknown>) => {
  const result = readMcpServers("claude", { mcpServers: servers }, { launch, cwd: "." })
  if (Result.isFailure(result)) throw new Error(result.failure)
  return result.success
}

describe("import-mcp with hostile settings", () => {
  it("a credential as a ${VAR:-default} is withheld like a literal one: env, header, url query and args", () => {
    const result = imported({
      env: {
        command: "srv",
        env: {
          GITHUB_TOKEN: "${GITHUB_TOKEN:-hunter2-in-env}",
          OTHER: "${OTHER_VAR:-ghp_abcdefghijklmnopqrstuvwxyz0123456789}",
          MODE: "${MODE:-fast}"
        }
      },
      head: {
        type: "http",
        url: "https://api.example.com/mcp",
        headers: { Authorization: "Bearer ${API_TOKEN:-hunter2-in-header}", "X-Region": "${REGION:-eu}" }
      },
      query: { type: "http", url: "https://api.example.com/mcp?api_key=${KEY:-hunter2-in-query}" },
      args: { command: "srv", args: ["--token=${T:-sk-abcdefghijklmnopqrstuvwxyz}"] }
    })
    const written = JSON.stringify(result.extensions)
    for (const secret of ["hunter2", "ghp_abcdefghij", "sk-abcdefghij"]) expect(written).not.toContain(secret)
    const [env, head] = result.extensions
    // MODE's default is no credential: it stays, read by sh when the server starts.
    expect(env?.["args"]).toContain('export MODE="${MODE:-fast}"; exec "$@"')
    expect(env?.["env_passthrough"]).toEqual(["GITHUB_TOKEN", "OTHER", "MODE"])
    expect(head?.["args"]).toEqual([
      "mcp",
      "--name=head",
      "--timeout-ms=60000",
      "--startup-timeout-ms=60000",
      "--url=https://api.example.com/mcp",
      "--header=Authorization:Bearer ${HEAD_AUTHORIZATION}",
      "--header=X-Region:${REGION:-eu}"
    ])
    expect(result.skipped.map((s) => s.where)).toEqual(["mcpServers.query", "mcpServers.args"])
    expect(result.skipped[0]?.why).toContain('carries a credential in "api_key"')
    expect(result.skipped[1]?.why).toContain("args[0] holds what looks like a credential")
    expect(result.warnings.map((w) => w.why.split(":")[0])).toEqual([
      "env.GITHUB_TOKEN holds a literal value (a default), and it looks like a credential",
      "env.OTHER holds a literal value (a default), and it looks like a credential",
      "headers.Authorization holds a literal credential"
    ])
  })

  it("a server started through sh (its env from references) keeps its script on the command line, where trust counts it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-mcp-trust-"))
    writeFileSync(
      join(dir, "server.js"),
      "process.stdout.write(JSON.stringify([process.env.API_KEY, ...process.argv.slice(2)]))\n"
    )
    const result = imported({
      s: { command: "node", args: ["server.js", "--root=${ROOT}"], env: { API_KEY: "${MY_KEY}" } }
    })
    const config = decodeConfig({ extensions: result.extensions })
    if (Result.isFailure(config)) throw new Error(config.failure.message)
    const [extension] = config.success.extensions
    if (extension === undefined) throw new Error("no extension")
    const scripts = await Effect.runPromise(scriptsOf(dir, dir, extension))
    expect(scripts.map((s) => s.path)).toContain("server.js")
    // And sh runs it with the references' values, each word as written.
    const args = extension.args.slice(extension.args.indexOf("--") + 1)
    const r = spawnSync(args[0] ?? "", args.slice(1), {
      cwd: dir,
      env: { PATH: `${dirname(process.execPath)}:${process.env["PATH"]}`, ROOT: "a b", MY_KEY: "k *" },
      encoding: "utf8"
    })
    expect(args.slice(0, 2)).toEqual(["sh", "-c"])
    expect(JSON.parse(r.stdout)).toEqual(["k *", "--root=a b"])
  })

  it("a url with user info (a token as the user name, or a reference there) is not carried over", () => {
    const result = imported({
      token: { type: "http", url: "https://hunter2token@mcp.example.com/mcp" },
      ref: { type: "http", url: "https://${MCP_USER}:${MCP_PASS}@mcp.example.com/mcp" },
      fine: { type: "http", url: "https://mcp.example.com/mcp?user=me" }
    })
    expect(JSON.stringify(result.extensions)).not.toContain("hunter2token")
    expect(result.extensions.map((e) => e["name"])).toEqual(["fine"])
    expect(result.skipped.map((s) => [s.where, s.why.split(":")[0]])).toEqual([
      ["mcpServers.token", "its url holds a user name or password (user"],
      ["mcpServers.ref", "its url holds a user name or password (user"]
    ])
    expect(JSON.stringify(result.skipped)).not.toContain("hunter2token")
  })

  it("abhed-ext mcp refuses a --url with user info (fetch would refuse it at every call), never echoing it", () => {
    const base: McpArgs = { name: "a", url: undefined, headers: [], command: undefined, args: [] }
    for (const url of ["https://hunter2@x.example/mcp", "https://${U}:${P}@x.example/mcp"]) {
      const parsed = parseTarget({ ...base, url }, { U: "me", P: "hunter2" })
      expect(parsed).toEqual(
        Result.fail("--url: holds a user name or password (user:password@); send the credential with --header")
      )
    }
  })
})

type Line = Record<string, unknown>
const Slow = 180_000
const attackServer = join(repoRoot, "test/fixtures/mcp/attack-server.mjs")

/** Args a guard reads one way and a client could send another: a prototype key, a NUL, a big number, an emoji, `_meta`. */
const trickyArgs = JSON.parse(
  '{"__proto__":{"path":"/etc/shadow"},"constructor":{"x":1},"path":"/srv/a\\u0000b","n":12345678901234567890,' +
    '"u":"r\\u00e9\\ud83d\\ude00","deep":{"a":[1,{"b":null}]},"_meta":{"progressToken":7}}'
)

/**
 * One session per client (the host's own, the adapter) over test/fixtures/mcp/attack-server.mjs, with a guard that
 * denies `mcp__a__secret`. In order: a denied call's invoke, by its id and without (never sent to the server); an
 * allowed call's invoke with other args (nothing ran); answers forged for ids never sent (the next id, the id as a
 * string: dropped, the next call gets its own answer); args echoed by the server exactly as given; a tool whose
 * name is another server's after the mapping (`a` + `b__c`, `a__b` + `c`: neither is offered); what the client
 * asked of the server (initialize, tools/list and tools/call only: never a resource, prompt or completion); a JSON-RPC batch
 * (the connection ends, nothing in it is a result).
 */
const session = lines(
  { event: "list_tools" },
  { event: "tool_call", call_id: "d1", tool: "mcp__a__secret", args: {} },
  { ...invoke("mcp__a__secret"), call_id: "d1" },
  invoke("mcp__a__secret"),
  { event: "tool_call", call_id: "d2", tool: "mcp__a__echo", args: { path: "/ok" } },
  { ...invoke("mcp__a__echo", { path: "/NOT-JUDGED" }), call_id: "d2" },
  invoke("mcp__a__forge"),
  invoke("mcp__a__plain"),
  invoke("mcp__a__echo", trickyArgs),
  invoke("mcp__a__b__c"),
  invoke("mcp__a__seen"),
  invoke("mcp__a__batch"),
  invoke("mcp__a__plain")
)

const attacked = async (extensions: ReadonlyArray<object>, expect: ExpectStatic) => {
  const config = writeConfig({ extensions: [...extensions, guardExtension("^mcp__a__secret$")] })
  const audit = join(config, "..", "audit.jsonl")
  const r = await runCli(["run", "-c", config, "--audit", audit, "--audit-content", "full"], { input: session })
  expect(r.code, r.stderr).toBe(0)
  const out = jsonLines(r.stdout) as Array<Line>
  expect(out).toHaveLength(13)
  const [list, denied, byId, byArgs, allowed, otherArgs, forge, plain, echo, collided, seen, batch] = out
  const names = (list?.["tools"] as Array<{ name: string }>).map((t) => t.name)
  expect(names).not.toContain("mcp__a__b__c")
  expect(denied?.["decision"]).toBe("deny")
  expect(byId?.["error"]).toContain("was denied: a denied call never runs")
  expect(byArgs?.["error"]).toContain("was denied: a denied call never runs")
  expect(allowed?.["decision"]).toBe("allow")
  expect(otherArgs?.["error"]).toContain("nothing ran")
  expect(forge).toEqual({ event: "invoke_tool", result: "forge done", is_error: false })
  expect(plain).toEqual({ event: "invoke_tool", result: "called plain", is_error: false })
  expect(JSON.parse(String(echo?.["result"]))).toEqual({ name: "echo", arguments: trickyArgs })
  expect(collided?.["error"]).toBe('no extension provides the tool "mcp__a__b__c"')
  // All the client ever asked: no resources/read, prompts/get, completion/complete, logging/setLevel, … of its own.
  expect(seen).toEqual({
    event: "invoke_tool",
    result: "initialize notifications/initialized tools/list tools/call",
    is_error: false
  })
  expect(batch?.["is_error"] ?? true).toBe(true)
  // Nothing the guards did not allow ran, and nothing forged or batched became a result, in the output or the audit.
  const results = out.flatMap((line) => (line["event"] === "invoke_tool" ? [String(line["result"])] : []))
  for (const result of results) expect(result).not.toMatch(/FORGED|BATCHED|called secret|NOT-JUDGED/)
  expect(readFileSync(audit, "utf8")).not.toMatch(/FORGED|BATCHED|called secret/)
  return r
}

describe.concurrent("an MCP server that reaches for calls no judgment allowed", () => {
  it(
    "through the host's own client (protocol mcp): a name another server's after the mapping is offered by neither",
    async ({ expect }) => {
      const r = await attacked(
        [
          inHostExtension("a", [attackServer, "b__c,forge,echo,plain,seen,batch,secret"]),
          inHostExtension("a__b", [attackServer, "c"])
        ],
        expect
      )
      expect(r.stderr).toContain('tool "mcp__a__b__c" rejected for a, a__b: declared more than once')
      // The batch broke the protocol: the server is dead, and so are its tools.
      expect(r.stdout).toContain("extension a unavailable: malformed_reply")
    },
    Slow
  )

  it(
    "through abhed-ext mcp",
    async ({ expect }) => {
      const adapter = adapterExtension("a", [attackServer, "forge,echo,plain,seen,batch,secret"])
      const r = await attacked([{ ...adapter, name: "a" }], expect)
      expect(r.stdout).toContain("the MCP server broke the protocol (the server wrote a non-object)")
    },
    Slow
  )
})

describe("the host's MCP stdio transport, on pipes", () => {
  /** The transport over two pipes: what it writes to the server, and a way to write as the server. */
  const pipes = () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const written: Array<Record<string, unknown>> = []
    stdin.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n")) if (line !== "") written.push(JSON.parse(line))
    })
    const broken: Array<McpStdio.Broken> = []
    const connection = McpStdio.connect({ stdin, stdout }, (why) => broken.push(why))
    const server = (message: unknown) => stdout.write(`${JSON.stringify(message)}\n`)
    return { broken, connection, server, stdout, written }
  }
  const request = (id: number) => ({ jsonrpc: "2.0" as const, id, method: "tools/call", params: { name: "t" } })
  const settle = () => new Promise((resolve) => setImmediate(resolve))

  it("a call given up on is cancelled, and its late answer is dropped: the next call gets its own", async () => {
    const { connection, server, written } = pipes()
    const first = Effect.runFork(connection.transport.request(request(1)))
    await settle()
    await Effect.runPromise(Fiber.interrupt(first))
    expect(written.at(-1)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1 }
    })
    const second = Effect.runPromise(connection.transport.request(request(2)))
    await settle()
    // Late, forged for an id never sent (the next one, a string), then the second call's own answer.
    server({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "LATE" }] } })
    server({ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "FORGED" }] } })
    server({ jsonrpc: "2.0", id: "2", result: { content: [{ type: "text", text: "FORGED" }] } })
    server({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "own" }] } })
    expect(await second).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "own" }] } })
    // A third call, given the id 3 the server answered ahead: that forged answer is gone, it waits for its own.
    const third = Effect.runFork(connection.transport.request(request(3)))
    await settle()
    expect(third.pollUnsafe()).toBeUndefined()
    server({ jsonrpc: "2.0", id: 3, result: { content: [] } })
    expect(await Effect.runPromise(Fiber.join(third))).toEqual({ jsonrpc: "2.0", id: 3, result: { content: [] } })
  })

  it("an answer cut anywhere (inside a UTF-8 character too), ending in CRLF, and then answered twice: read once, whole", async () => {
    const { broken, connection, server, stdout } = pipes()
    const call = Effect.runPromise(connection.transport.request(request(1)))
    await settle()
    const answer = { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "日本 é ✓" }] } }
    const bytes = Buffer.from(`${JSON.stringify(answer)}\r\n`)
    // One byte at a time, each its own write and turn: every cut, the ones inside a character included.
    for (let i = 0; i < bytes.length; i++) {
      stdout.write(bytes.subarray(i, i + 1))
      await settle()
    }
    expect(await call).toEqual(answer)
    // The same answer again, and one for an id never sent: nothing waits for them, nothing breaks.
    server(answer)
    server({ ...answer, id: 99 })
    await settle()
    expect(broken).toEqual([])
    const next = Effect.runPromise(connection.transport.request(request(2)))
    await settle()
    server({ ...answer, id: 2 })
    expect(await next).toEqual({ ...answer, id: 2 })
  })

  it("a JSON-RPC batch breaks the connection: the call waiting fails, nothing in the batch answers it", async () => {
    const { broken, connection, server } = pipes()
    const call = Effect.runPromise(Effect.flip(connection.transport.request(request(1))))
    await settle()
    server([{ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "BATCHED" }] } }])
    expect((await call).reason._tag).toBe("ProtocolError")
    expect(broken).toEqual([
      {
        _tag: "NotJsonRpc",
        got: "a JSON value that is not an object",
        // Its head, for an operator's line; the host's death cause keeps to `got`.
        excerpt: `${JSON.stringify(JSON.stringify([{ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "BATCHED" }] } }]).slice(0, 80))}…`
      }
    ])
  })

  it("a server that floods requests and never reads its stdin does not grow the host's memory without bound", async () => {
    const stdin = new PassThrough() // never read
    const stdout = new PassThrough()
    const broken: Array<McpStdio.Broken> = []
    const connection = McpStdio.connect({ stdin, stdout }, (why) => broken.push(why))
    const call = Effect.runPromise(Effect.flip(connection.transport.request(request(1))))
    const pings = Array.from({ length: 100_000 }, (_, id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`)
    stdout.write(pings.join(""))
    await settle()
    expect(stdin.writableLength).toBeGreaterThan(0)
    // 100,000 answers would be 4 MB; the bound is 1 MiB and one answer.
    expect(stdin.writableLength).toBeLessThan(1024 * 1024 + 100)
    // Not lost silently: the connection is broken, said once, and the call waiting fails.
    expect(broken).toEqual([{ _tag: "Flooded", unreadBytes: McpStdio.MaxUnreadReplyBytes }])
    expect((await call).message).toBe("the server sent requests and did not read the answers")
  })
})
