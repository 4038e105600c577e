import * as TelemetryExport from "@abhed/host/TelemetryExport"
import { envProxy, makeAgents, post, sharedLookup } from "@abhed/host/TelemetryHttp"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Stream } from "effect"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { createServer, type Socket } from "node:net"

/**
 * The exporters' requests over node's HTTP client (TelemetryHttp.ts), against a collector written byte by byte: a
 * kept-alive connection that the collector closes as the next request goes out loses no batch; one it cuts once it
 * began to answer, or one given up on, is not sent again; a body that is not bytes and a redirect are not sent on.
 */

const Ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}"

/** A request's body, from the chunk that holds it whole (they are a few bytes). */
const bodyOf = (chunk: Buffer): string => {
  const text = chunk.toString("latin1")
  return text.slice(text.indexOf("\r\n\r\n") + 4)
}

/** A collector on a local port, each connection served by `serve`; the sender's agents; both closed with the scope. */
const collector = (serve: (socket: Socket) => void) =>
  Effect.gen(function* () {
    const server = createServer(serve)
    yield* Effect.acquireRelease(
      Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))),
      () => Effect.sync(() => server.close())
    )
    const address = server.address()
    const url = new URL(
      `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/v1/traces`
    )
    const agents = makeAgents()
    yield* Effect.addFinalizer(() => Effect.sync(() => agents.http.destroy()))
    const sendRequest = (request: HttpClientRequest.HttpClientRequest) =>
      post(agents)(request, url, new AbortController().signal)
    const send = (text: string) =>
      sendRequest(HttpClientRequest.post(url).pipe(HttpClientRequest.bodyText(text, "application/json")))
    // The first connection back in the agent's pool, to be reused by the next request.
    const pooled = Effect.gen(function* () {
      while (Object.keys(agents.http.freeSockets).length === 0) yield* Effect.sleep("1 millis")
    })
    // Every socket back in the pool or gone: whatever was sent has arrived.
    const settled = Effect.gen(function* () {
      while (Object.keys(agents.http.sockets).length > 0) yield* Effect.sleep("1 millis")
    })
    return { url, send, sendRequest, pooled, settled }
  })

describe("OTLP requests over kept-alive sockets", () => {
  it.live("a request on a connection the collector closed is sent again once, on a fresh one", () =>
    Effect.gen(function* () {
      const bodies: Array<string> = []
      let connections = 0
      // Each connection answers its first request (keeping the connection) and drops it at the second, unanswered.
      const { pooled, send } = yield* collector((socket) => {
        connections++
        let answered = false
        socket.on("data", (chunk) => {
          if (answered) return socket.destroy()
          bodies.push(bodyOf(chunk))
          answered = true
          socket.write(Ok)
        })
      })
      assert.strictEqual(yield* send("first"), 200)
      yield* pooled
      assert.strictEqual(yield* send("second"), 200)
      assert.deepStrictEqual(bodies, ["first", "second"])
      assert.strictEqual(connections, 2)
    }).pipe(Effect.scoped)
  )

  it.live("a connection cut once the collector began to answer costs the request: it is not sent again", () =>
    Effect.gen(function* () {
      let first = true
      const bodies: Array<string> = []
      // The first connection answers its first request, then begins an answer to the second and resets.
      const { pooled, send, settled } = yield* collector((socket) => {
        const cuts = first
        first = false
        let requests = 0
        socket.on("data", (chunk) => {
          bodies.push(bodyOf(chunk))
          requests++
          if (cuts && requests === 2) {
            socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{", () => socket.resetAndDestroy())
          } else socket.write(Ok)
        })
      })
      assert.strictEqual(yield* send("first"), 200)
      yield* pooled
      const exit = yield* Effect.exit(send("second"))
      assert.isTrue(Exit.isFailure(exit))
      // A request sent again behind the failure's back would have arrived by now.
      yield* settled
      assert.deepStrictEqual(bodies, ["first", "second"])
    }).pipe(Effect.scoped)
  )

  it.live("a request given up on (its timeout) on a kept-alive connection is not sent again behind its back", () =>
    Effect.gen(function* () {
      const bodies: Array<string> = []
      // Each connection answers its first request and holds the rest unanswered.
      const { pooled, send, settled } = yield* collector((socket) => {
        let requests = 0
        socket.on("data", (chunk) => {
          bodies.push(bodyOf(chunk))
          if (++requests === 1) socket.write(Ok)
        })
      })
      assert.strictEqual(yield* send("first"), 200)
      yield* pooled
      const held = yield* Effect.forkChild(send("second"))
      while (bodies.length < 2) yield* Effect.sleep("1 millis")
      yield* Fiber.interrupt(held)
      // Nothing of it left: no socket, no request sent again.
      yield* settled
      assert.deepStrictEqual(bodies, ["first", "second"])
    }).pipe(Effect.scoped)
  )

  it.live("a body that is not bytes is refused, not sent empty as if it went", () =>
    Effect.gen(function* () {
      let requests = 0
      const { sendRequest, url } = yield* collector((socket) => {
        socket.on("data", () => {
          requests++
          socket.write(Ok)
        })
      })
      const exit = yield* Effect.exit(
        sendRequest(
          HttpClientRequest.post(url).pipe(
            HttpClientRequest.setBody(HttpBody.stream(Stream.make(new TextEncoder().encode("spans"))))
          )
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : ""), "Stream")
      assert.strictEqual(requests, 0)
    }).pipe(Effect.scoped)
  )

  it.live("a redirect is not followed: its status is the answer, and nothing goes where it points", () =>
    Effect.gen(function* () {
      const paths: Array<string> = []
      const { sendRequest, url } = yield* collector((socket) => {
        socket.on("data", (chunk) => {
          paths.push(chunk.toString("latin1").split(" ")[1] ?? "")
          socket.write("HTTP/1.1 308 Permanent Redirect\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n")
        })
      })
      const status = yield* sendRequest(
        HttpClientRequest.post(url, { headers: { authorization: "Bearer token" } }).pipe(
          HttpClientRequest.bodyText("spans", "application/json")
        )
      )
      assert.strictEqual(status, 308)
      assert.deepStrictEqual(paths, ["/v1/traces"])
    }).pipe(Effect.scoped)
  )

  it.live("a header value node refuses fails the request by the header's name, never its value", () =>
    Effect.gen(function* () {
      const { sendRequest, url } = yield* collector((socket) => socket.on("data", () => socket.write(Ok)))
      const exit = yield* Effect.exit(
        sendRequest(
          HttpClientRequest.post(url, { headers: { authorization: "Bearer hunter2\nx" } }).pipe(
            HttpClientRequest.bodyText("spans", "application/json")
          )
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      const said = String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : "")
      assert.include(said, "authorization")
      assert.notInclude(said, "hunter2")
    }).pipe(Effect.scoped)
  )
})

describe("the collector's name, looked up", () => {
  it.live(
    "once at a time, whatever the requests waiting on it: a resolver that hangs holds one thread, not one a request",
    () =>
      Effect.gen(function* () {
        const asked: Array<(error: NodeJS.ErrnoException | null, address: string, family: number) => void> = []
        // A resolver that does not answer until told to.
        const agents = makeAgents(
          undefined,
          sharedLookup((_host, _options, callback) => {
            asked.push(callback)
          })
        )
        yield* Effect.addFinalizer(() => Effect.sync(() => agents.http.destroy()))
        const url = new URL("http://collector.test:4318/v1/traces")
        const send = Effect.suspend(() =>
          post(agents)(
            HttpClientRequest.post(url).pipe(HttpClientRequest.bodyText("batch", "application/json")),
            url,
            new AbortController().signal
          )
        )
        const fibers = yield* Effect.forEach([1, 2, 3, 4, 5, 6], () => Effect.forkChild(send))
        while (asked.length === 0) yield* Effect.sleep("1 millis")
        yield* Effect.sleep("20 millis")
        assert.strictEqual(asked.length, 1)
        // Its answer reaches every request that waited on it.
        const refused = Object.assign(new Error("getaddrinfo ENOTFOUND collector.test"), { code: "ENOTFOUND" })
        for (const answer of asked) answer(refused, "", 0)
        for (const fiber of fibers) {
          const exit = yield* Fiber.await(fiber)
          assert.ok(Exit.isFailure(exit) && Cause.pretty(exit.cause).includes("ENOTFOUND"))
        }
        // Once answered, the next request asks again.
        const again = yield* Effect.forkChild(send)
        while (asked.length === 1) yield* Effect.sleep("1 millis")
        asked[1]?.(refused, "", 0)
        yield* Fiber.await(again)
      }).pipe(Effect.scoped)
  )
})

describe("the transport after the session's end", () => {
  it.effect("the metrics' own last export is no loss once the last flush ran; the rest is, and before it", () =>
    Effect.gen(function* () {
      const batches: TelemetryExport.Batches = new WeakMap()
      const stats = TelemetryExport.makeStats()
      const { client } = yield* TelemetryExport.transport("1 second", batches, stats)
      const send = (signal: "traces" | "metrics", items: number) => {
        const body = HttpBody.uint8Array(new Uint8Array([1]), "application/x-protobuf")
        batches.set(body, { signal, items })
        // Never reached: nothing is sent after the session's end.
        return client.execute(HttpClientRequest.post("http://127.0.0.1:9/v1/x").pipe(HttpClientRequest.setBody(body)))
      }
      stats.closed = true
      // The last flush did not run (cut by the timeout): the metrics' last totals never left.
      yield* send("metrics", 1)
      assert.strictEqual(stats.dropped.metrics, 1)
      stats.flushed = true
      yield* send("metrics", 1)
      yield* send("traces", 3)
      assert.deepStrictEqual(stats.dropped, { traces: 3, metrics: 1, logs: 0 })
    }).pipe(Effect.scoped)
  )
})

describe("a proxy from the environment", () => {
  /** A proxy on a local port that answers every request itself, keeping the request lines it saw. */
  const proxy = Effect.gen(function* () {
    const seen: Array<string> = []
    const server = createServer((socket) => {
      socket.on("data", (chunk) => {
        const line = chunk.toString("latin1").split("\r\n")[0]
        if (line !== undefined && /^[A-Z]+ /.test(line)) seen.push(line)
        socket.write(Ok)
      })
    })
    yield* Effect.acquireRelease(
      Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))),
      () => Effect.sync(() => server.close())
    )
    const address = server.address()
    const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
    return { seen, url }
  })

  /** One request to a collector no resolver knows, through agents made for `env`. */
  const sendVia = (
    env: NodeJS.ProcessEnv,
    execArgv: ReadonlyArray<string> = [],
    to = "http://collector.invalid:4318/v1/traces"
  ) =>
    Effect.gen(function* () {
      const agents = makeAgents(envProxy(env, execArgv))
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          agents.http.destroy()
          agents.https.destroy()
        })
      )
      const url = new URL(to)
      const request = HttpClientRequest.post(url).pipe(HttpClientRequest.bodyText("batch", "application/json"))
      return yield* Effect.exit(post(agents)(request, url, new AbortController().signal))
    })

  it.live("goes through HTTP_PROXY when the process opted in as node does (NODE_USE_ENV_PROXY, --use-env-proxy)", () =>
    Effect.gen(function* () {
      const { seen, url } = yield* proxy
      for (const [env, execArgv] of [
        [{ NODE_USE_ENV_PROXY: "1", HTTP_PROXY: url }, []],
        [{ HTTP_PROXY: url }, ["--use-env-proxy"]],
        [{ NODE_OPTIONS: "--max-old-space-size=512 --use-env-proxy", HTTP_PROXY: url }, []],
        // Node takes the flag with a value too, and its command line over NODE_OPTIONS.
        [{ NODE_OPTIONS: "--use-env-proxy=true", HTTP_PROXY: url }, []],
        [{ NODE_OPTIONS: "--no-use-env-proxy", HTTP_PROXY: url }, ["--use-env-proxy"]]
      ] as const) {
        const exit = yield* sendVia(env, execArgv)
        assert.deepStrictEqual(exit, Exit.succeed(200))
      }
      assert.deepStrictEqual(seen, Array(5).fill("POST http://collector.invalid:4318/v1/traces HTTP/1.1"))
    }).pipe(Effect.scoped)
  )

  it.live("tunnels https through HTTPS_PROXY (CONNECT), and sends to a host in NO_PROXY straight", () =>
    Effect.gen(function* () {
      const { seen, url } = yield* proxy
      const optIn = { NODE_USE_ENV_PROXY: "1", HTTP_PROXY: url, HTTPS_PROXY: url }
      // The proxy answers the tunnel's request, then no TLS: the request fails, after the proxy saw where it went.
      const tunnelled = yield* sendVia(optIn, [], "https://collector.invalid:4318/v1/traces")
      assert.ok(Exit.isFailure(tunnelled))
      assert.deepStrictEqual(seen, ["CONNECT collector.invalid:4318 HTTP/1.1"])
      for (const to of ["http://collector.invalid:4318/v1/traces", "https://collector.invalid:4318/v1/traces"]) {
        const straight = yield* sendVia({ ...optIn, NO_PROXY: "localhost,.invalid" }, [], to)
        assert.ok(Exit.isFailure(straight))
      }
      assert.strictEqual(seen.length, 1)
    }).pipe(Effect.scoped)
  )

  it.live("a proxy that refuses the tunnel: the failure names the proxy without its credentials", () =>
    Effect.gen(function* () {
      const refusing = createServer((socket) =>
        socket.once("data", () => socket.end("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"))
      )
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve))),
        () => Effect.sync(() => refusing.close())
      )
      const address = refusing.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const proxyUrl = `http://abhed:s3cret-pass@127.0.0.1:${port}`
      const exit = yield* sendVia(
        { NODE_USE_ENV_PROXY: "1", HTTPS_PROXY: proxyUrl },
        [],
        "https://collector.invalid:4318/v1/traces"
      )
      assert.ok(Exit.isFailure(exit))
      // What the session's end warning would name (TelemetryExport.ts: the cause's first line).
      const text = Exit.isFailure(exit) ? String(exit.cause) : ""
      assert.include(text, `127.0.0.1:${port}`)
      assert.include(text, "407")
      assert.notInclude(text, "s3cret-pass")
      assert.notInclude(text, "abhed:")
    }).pipe(Effect.scoped)
  )

  it.live(
    "proxy settings node refuses (set after it started: dotenv) fail each request, never the layer, and are not quoted",
    () =>
      Effect.gen(function* () {
        // Node checks them at its start; a process that sets them later gets them first when the agents are made.
        const exit = yield* sendVia(
          { NODE_USE_ENV_PROXY: "1", HTTP_PROXY: "http://abhed:s3cret-pass@[bad" },
          [],
          "http://collector.invalid:4318/v1/traces"
        )
        assert.ok(Exit.isFailure(exit))
        const text = Exit.isFailure(exit) ? String(exit.cause) : ""
        assert.include(text, "the proxy settings in the environment")
        assert.notInclude(text, "s3cret-pass")
      }).pipe(Effect.scoped)
  )

  it.live(
    "is left alone without the opt-in, or opted out as node has it: the request goes straight to the collector",
    () =>
      Effect.gen(function* () {
        const { seen, url } = yield* proxy
        for (const [env, execArgv] of [
          [{ HTTP_PROXY: url }, []],
          // Any other value than 1 is no opt-in to node.
          [{ NODE_USE_ENV_PROXY: "true", HTTP_PROXY: url }, []],
          // --no-use-env-proxy outweighs NODE_USE_ENV_PROXY=1, and the command line NODE_OPTIONS.
          [{ NODE_USE_ENV_PROXY: "1", HTTP_PROXY: url }, ["--no-use-env-proxy"]],
          [{ NODE_USE_ENV_PROXY: "1", NODE_OPTIONS: "--no-use-env-proxy", HTTP_PROXY: url }, []],
          [{ NODE_OPTIONS: "--use-env-proxy", HTTP_PROXY: url }, ["--no-use-env-proxy"]]
        ] as const) {
          const exit = yield* sendVia(env, execArgv)
          // collector.invalid resolves nowhere: straight there, the request fails, and the proxy never saw it.
          assert.ok(Exit.isFailure(exit))
        }
        assert.deepStrictEqual(seen, [])
      }).pipe(Effect.scoped)
  )
})
