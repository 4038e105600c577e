import { Deferred, Effect, type Scope } from "effect"
import * as McpClient from "effect/ai/McpClient"
import type { McpClientError } from "effect/ai/McpClientError"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { stdioTransport } from "./McpChild.ts"
import { httpStartFailure } from "./McpHttpStart.ts"
import { sameOriginFetch } from "./McpRedirects.ts"
import type { McpTarget } from "./McpTarget.ts"

/**
 * The adapter's one connection to its MCP server, with effect's MCP client (protocol 2025-11-25). It is opened in
 * the background when the adapter starts, so a slow server's start overlaps the host's start-up; each request
 * waits for it a bounded time. The connection lives in the adapter's scope: when the adapter ends (stdin closed,
 * SIGTERM), the server's stdin is closed, then it gets SIGTERM, then SIGKILL.
 */

/**
 * The largest single MCP message read from an HTTP server; a larger one closes the connection. Half effect's default:
 * the adapter passes on no result over 1 MiB (McpResult.ts), so a message far past that is only work to read. (A
 * stdio server's transport has the same bound, McpStdio.ts.)
 */
const MaxMessageBytes = 8 * 1024 * 1024

/** How long the server may take to start and answer `initialize`: the client's own bound, past every wait. */
const InitializeTimeoutMs = 60_000

export interface Identity {
  readonly name: string
  readonly version: string
}

const client = (target: McpTarget, identity: Identity, warn: (text: string) => void) => {
  const options = {
    ...identity,
    timeout: InitializeTimeoutMs,
    protocol: McpProtocol.v2025_11_25,
    maxMessageBytes: MaxMessageBytes
  }
  // The transport is acquired in the caller's scope (not a layer's, which would close when `make` returns).
  const transport =
    target._tag === "Http"
      ? McpClient.http({ ...options, url: target.url, headers: target.headers }).pipe(
          Effect.provide(FetchHttpClient.layer),
          // Redirects followed within the URL's origin only (McpRedirects.ts): the headers go to no one else.
          Effect.provideService(FetchHttpClient.Fetch, sameOriginFetch())
        )
      : // The host's own stdio transport, over a child of ours (McpChild.ts): bounded as the host's is.
        stdioTransport(target.command, target.args, warn)
  const started = Effect.flatMap(transport, (t) =>
    McpClient.make(options).pipe(Effect.provideService(McpClient.Transport, t))
  )
  return target._tag === "Http"
    ? Effect.mapError(started, (error) => httpStartFailure(target.url, target.headers, error))
    : started
}

/** The connection, once open, or why it could not be opened. */
export type Connection = Deferred.Deferred<McpClient.McpClient, McpClientError>

/**
 * Opens the connection in the background; its resources belong to the caller's scope. `warn` says on stderr why a
 * stdio server's connection broke after it started, once.
 */
export const open = (
  target: McpTarget,
  identity: Identity,
  warn: (text: string) => void
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function* () {
    const connection = yield* Deferred.make<McpClient.McpClient, McpClientError>()
    // The forked fiber runs in the caller's scope: the client's finalizers are the adapter's.
    // A break before the start is said by the start's failure (list_tools answers `failed` with it): once.
    const afterStart = (text: string) => {
      if (Deferred.isDoneUnsafe(connection)) warn(text)
    }
    yield* client(target, identity, afterStart).pipe(
      Effect.exit,
      Effect.flatMap((exit) => Deferred.done(connection, exit)),
      Effect.forkScoped
    )
    return connection
  })
