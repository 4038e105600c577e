import { Effect } from "effect"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"

/**
 * The exporters' requests over node's own HTTP client, its sockets kept alive: the answer's status, its body read
 * and dropped. Not `fetch`: undici's streams, header checks and two copies of each body cost more CPU per request
 * than writing the batch, on the dispatches' thread. Every body the exporters make is bytes (or text kept as such).
 */

export interface Agents {
  readonly http: http.Agent
  readonly https: https.Agent
  /** Why every request fails: proxy settings node refused (`makeAgents`). */
  readonly refused?: string | undefined
}

/**
 * The environment to read `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` from, when the process opted in to them as
 * Node does: `NODE_USE_ENV_PROXY=1`, or `--use-env-proxy` (with a value or none) in `NODE_OPTIONS` or on the
 * command line, `--no-use-env-proxy` turning it off again, the last of them winning and the command line read after
 * `NODE_OPTIONS`. `fetch` and Node's global agents follow that opt-in, and agents of one's own only when given the
 * environment. Without it, undefined: requests go straight to the collector, as they do through `fetch`.
 */
export const envProxy = (
  env: NodeJS.ProcessEnv = process.env,
  execArgv: ReadonlyArray<string> = process.execArgv
): NodeJS.ProcessEnv | undefined => {
  let on = env["NODE_USE_ENV_PROXY"] === "1"
  for (const flag of [...(env["NODE_OPTIONS"] ?? "").split(/\s+/), ...execArgv]) {
    if (flag === "--use-env-proxy" || flag.startsWith("--use-env-proxy=")) on = true
    else if (flag === "--no-use-env-proxy") on = false
  }
  return on ? env : undefined
}

/**
 * The collector's name looked up once at a time, whatever the number of requests waiting on it: each lookup holds
 * one of libuv's four threads (getaddrinfo), which the host's file writes (the audit's) share. A resolver that does
 * not answer would otherwise hold one per request (twelve in flight at most) for its own timeout, past the requests'
 * own, and the audit's writes would wait behind them.
 */
export const sharedLookup = (lookup: LookupFunction = dns.lookup): LookupFunction => {
  const waiting = new Map<string, Array<Parameters<LookupFunction>[2]>>()
  return (hostname, options, callback) => {
    const key = `${hostname}\u0000${JSON.stringify(options)}`
    const callbacks = waiting.get(key)
    if (callbacks !== undefined) return void callbacks.push(callback)
    waiting.set(key, [callback])
    lookup(hostname, options, (error, address, family) => {
      const all = waiting.get(key) ?? []
      waiting.delete(key)
      for (const each of all) each(error, address, family)
    })
  }
}

/**
 * The agents, through the proxy `proxyEnv` names if any. Node checks the proxy settings when it starts, so refused
 * ones are settings made later (a `.env` file loaded by the program): then every request fails, naming the settings
 * but not their text (a proxy URL may hold a password), and the layer lives on. Not straight to the collector
 * instead: the proxy may be the only way out a network allows.
 */
export const makeAgents = (
  proxyEnv: NodeJS.ProcessEnv | undefined = envProxy(),
  lookup: LookupFunction = sharedLookup()
): Agents => {
  const KeepAlive = { keepAlive: true, lookup }
  if (proxyEnv === undefined) return { http: new http.Agent(KeepAlive), https: new https.Agent(KeepAlive) }
  let plain: http.Agent | undefined
  try {
    plain = new http.Agent({ ...KeepAlive, proxyEnv })
    return { http: plain, https: new https.Agent({ ...KeepAlive, proxyEnv }) }
  } catch (e) {
    plain?.destroy()
    const code = e instanceof Error && "code" in e && typeof e.code === "string" ? ` (${e.code})` : ""
    return {
      http: new http.Agent(KeepAlive),
      https: new https.Agent(KeepAlive),
      refused: `the proxy settings in the environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) are not valid${code}: nothing is sent`
    }
  }
}

/**
 * A request whose kept-alive socket turns out closed by the collector before any answer began (most often: it
 * closed an idle connection as the request went out) is sent again once on a fresh socket: not a retry of a
 * collector's failure, which costs the batch. Once an answer began, a cut costs the request: the collector has it.
 */
const stale = (request: http.ClientRequest, answered: boolean, error: NodeJS.ErrnoException) =>
  !answered && request.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE")

/** An OTLP answer is a few bytes (a partial success at most): past this, a collector's body is not read on. */
export const MaxAnswerBytes = 64 * 1024

export const post =
  (agents: Agents) =>
  (request: HttpClientRequest.HttpClientRequest, url: URL, signal: AbortSignal): Effect.Effect<number, Error> =>
    Effect.callback<number, Error>((resume) => {
      if (agents.refused !== undefined) return resume(Effect.fail(new Error(agents.refused)))
      const body = request.body
      // Another kind of body (a stream, form data) would go out empty and be counted as sent.
      if (body._tag !== "Uint8Array" && body._tag !== "Empty")
        return resume(Effect.fail(new Error(`a request body of kind ${body._tag} cannot be sent (bytes only)`)))
      const secure = url.protocol === "https:"
      const headers: Record<string, string> = { ...request.headers }
      if (body._tag === "Uint8Array") {
        headers["content-type"] = body.contentType
        headers["content-length"] = String(body.contentLength)
      }
      let current: http.ClientRequest | undefined
      // Given up on (the timeout, the session's end): destroying the request must not send it again.
      let cancelled = false
      const send = (again: boolean) => {
        let answered = false
        const sent = (secure ? https : http).request(
          url,
          { method: request.method, headers, agent: secure ? agents.https : agents.http, signal },
          (response) => {
            answered = true
            const status = response.statusCode ?? 0
            let read = 0
            response.on("data", (chunk: Buffer) => {
              read += chunk.length
              if (read <= MaxAnswerBytes) return
              // Its status is the answer: the rest of an endless body is not read (on the dispatches' thread) to its end.
              resume(Effect.succeed(status))
              response.destroy()
            })
            response.on("error", (e) => resume(Effect.fail(e)))
            response.on("end", () => resume(Effect.succeed(status)))
          }
        )
        current = sent
        sent.on("error", (e) =>
          !again && !cancelled && stale(sent, answered, e) ? send(true) : resume(Effect.fail(e))
        )
        if (body._tag === "Uint8Array") sent.end(body.text ?? body.body)
        else sent.end()
      }
      send(false)
      return Effect.sync(() => {
        cancelled = true
        current?.destroy()
      })
    })
