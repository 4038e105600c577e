import { type ChildProcess, spawn } from "node:child_process"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { bin, jsonLines, runCli } from "../support/cli-helpers.ts"
import { everythingServer, invoke, lines, PatientAdapter, PatientHost, writeConfig } from "../support/mcp-helpers.ts"

/**
 * `abhed-ext mcp --url`: server-everything over streamable HTTP, and the `--header` a config writes as a
 * `${VAR}` reference, whose value the adapter reads from its environment (so only when the config passes it).
 */

const Slow = 180_000

const adapter = (url: string, headers: ReadonlyArray<string>, extra: Record<string, unknown> = {}) => ({
  name: "mcp-web",
  command: process.execPath,
  args: [
    bin,
    "mcp",
    "--name",
    "web",
    "--timeout-ms",
    String(PatientAdapter.timeoutMs),
    "--startup-timeout-ms",
    String(PatientAdapter.startupTimeoutMs),
    `--url=${url}`,
    ...headers.map((h) => `--header=${h}`)
  ],
  ...PatientHost,
  ...extra
})

/** A free port: asked of the kernel, then released for the server (which takes its port from PORT). */
const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

const started: Array<ChildProcess> = []
afterAll(() => {
  for (const child of started) child.kill("SIGKILL")
})

describe("abhed-ext mcp --url", () => {
  it(
    "server-everything over streamable HTTP: its tools listed and called",
    async () => {
      const port = await freePort()
      const server = spawn(process.execPath, [everythingServer, "streamableHttp"], {
        env: { ...process.env, PORT: String(port) },
        stdio: ["ignore", "ignore", "pipe"]
      })
      started.push(server)
      await new Promise<void>((resolve, reject) => {
        let err = ""
        server.stderr?.setEncoding("utf8").on("data", (d: string) => {
          err += d
          if (err.includes("listening on port")) resolve()
        })
        server.on("exit", (code) => reject(new Error(`server-everything exited (${code}): ${err}`)))
      })
      const config = writeConfig({ extensions: [adapter(`http://127.0.0.1:${port}/mcp`, [])] })
      const r = await runCli(["run", "--config", config], {
        input: lines({ event: "list_tools" }, invoke("mcp__web__echo", { message: "over http" }))
      })
      expect(r.code, r.stderr).toBe(0)
      const [list, echo] = jsonLines(r.stdout) as Array<Record<string, unknown>>
      expect((list?.["tools"] as Array<{ name: string }>).map((t) => t.name)).toContain("mcp__web__echo")
      expect(echo).toMatchObject({ event: "invoke_tool", is_error: false })
      expect(String(echo?.["result"])).toContain("over http")
    },
    Slow
  )

  it(
    "a --header's ${TOKEN} is sent only when the config passes TOKEN; the server's 401 leaves no tools, the run goes on",
    async () => {
      const seen: Array<IncomingHttpHeaders> = []
      const server = createServer((request, response) => {
        seen.push(request.headers)
        request.resume()
        response.writeHead(401, { "content-type": "text/plain" }).end("no")
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
      try {
        const header = ["Authorization: Bearer ${MCP_HTTP_TOKEN:-none}"]
        const env = { MCP_HTTP_TOKEN: "t0k-http" }
        const without = await runCli(["run", "--config", writeConfig({ extensions: [adapter(url, header)] })], {
          input: lines({ event: "list_tools" }),
          env
        })
        const passed = await runCli(
          [
            "run",
            "--config",
            writeConfig({ extensions: [adapter(url, header, { env_passthrough: ["MCP_HTTP_TOKEN"] })] })
          ],
          { input: lines({ event: "list_tools" }), env }
        )
        for (const r of [without, passed]) {
          expect(r.code, r.stderr).toBe(0)
          expect(jsonLines(r.stdout)).toEqual([{ event: "list_tools", tools: [] }])
        }
        expect(seen.map((h) => h.authorization)).toEqual(["Bearer none", "Bearer t0k-http"])
      } finally {
        server.close()
      }
    },
    Slow
  )

  it(
    "a redirect is followed within the --url's origin only: the --header never reaches another origin",
    async () => {
      // `elsewhere` is another origin (another port): it must never see a request, nor the key.
      const elsewhereSeen: Array<string> = []
      const elsewhere = createServer((request, response) => {
        elsewhereSeen.push(String(request.headers["x-api-key"]))
        request.resume()
        response.writeHead(401).end()
      })
      // `home` sends /away elsewhere and /mcp to /mcp/ (same origin), where it answers 401 with what it got.
      const homeSeen: Array<string> = []
      const home = createServer((request, response) => {
        request.resume()
        if (request.url === "/away") return response.writeHead(307, { location: `${elsewhereUrl}/mcp` }).end()
        if (request.url === "/mcp") return response.writeHead(307, { location: "/mcp/" }).end()
        homeSeen.push(`${request.url} ${String(request.headers["x-api-key"])}`)
        response.writeHead(401).end()
      })
      const listen = (server: ReturnType<typeof createServer>) =>
        new Promise<string>((resolve) =>
          server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
        )
      const elsewhereUrl = await listen(elsewhere)
      const homeUrl = await listen(home)
      try {
        const extension = (name: string, path: string) => ({
          ...adapter(`${homeUrl}${path}`, ["X-Api-Key: k-secret-7f3a"]),
          name: `mcp-${name}`,
          args: adapter(`${homeUrl}${path}`, ["X-Api-Key: k-secret-7f3a"]).args.map((a) => (a === "web" ? name : a))
        })
        const r = await runCli(
          ["run", "--config", writeConfig({ extensions: [extension("away", "/away"), extension("home", "/mcp")] })],
          { input: lines({ event: "list_tools" }) }
        )
        expect(r.code, r.stderr).toBe(0)
        expect(jsonLines(r.stdout)).toEqual([{ event: "list_tools", tools: [] }])
        expect(elsewhereSeen).toEqual([])
        expect(r.stderr).not.toContain("k-secret-7f3a")
        // Within the origin it is followed, with the header.
        expect(homeSeen).toContain("/mcp/ k-secret-7f3a")
      } finally {
        home.close()
        elsewhere.close()
      }
    },
    Slow
  )
})
