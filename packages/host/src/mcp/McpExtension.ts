import type { ExtensionConfig, Request } from "@abhed/protocol"
import { Deferred, Duration, Effect, Exit, FiberSet, type Scope } from "effect"
import * as McpClient from "effect/ai/McpClient"
import { ClosedError, McpClientError } from "effect/ai/McpClientError"
import type { Extension } from "../Extension.ts"
import * as ExtensionCore from "../ExtensionCore.ts"
import { warnAboutPassthrough } from "../ExtensionEnvironment.ts"
import { ExtensionExited, MalformedReply, ReplyTooLong, SpawnFailed } from "../ExtensionError.ts"
import * as ProcessExtension from "../ProcessExtension.ts"
import * as ProcessGroup from "../ProcessGroup.ts"
import * as StderrTail from "../StderrTail.ts"
import { makeCalls } from "./McpCalls.ts"
import * as McpStdio from "./McpStdio.ts"

/**
 * An extension that is an MCP server (`"protocol": "mcp"`, docs/mcp.md): the host starts it as it starts any extension
 * (the same command, working directory, environment rules, process group and close sequence) and is its MCP client,
 * with no adapter process in between. On the shared core, as a process extension is: one request at a time, the
 * timeouts, death, status and the audit behave alike. Its transport answers `list_tools` with the server's tools as
 * `mcp__NAME__TOOL` and `invoke_tool` with a call to the server (McpCalls.ts, shared with `abhed-ext mcp`).
 *
 * Bounds: every answer comes within four fifths of the extension's timeout (`startup_timeout_ms` for the first
 * exchange, `timeout_ms` after it), so that a call that hangs is a failed tool result and the server stays usable;
 * the core's watchdog stays the backstop. A server that cannot start, exits or breaks the protocol kills the
 * extension with that cause, as a process extension's exit would; the session goes on under `on_failure`.
 */

/** How much of an extension's timeout an MCP call may take: its answer, failed or not, comes before the host's. */
export const boundOf = (timeoutMs: number): number => Math.max(1, Math.floor((timeoutMs * 4) / 5))

/** How the bound is named in a failed call's message. */
const BoundName = "four fifths of timeout_ms"

/** How long, after the server exits, what it wrote before exiting may still be read before the exit is reported. */
const ExitDrainMillis = 100

/** How long a server whose stdout closed has to exit, for its exit to be its death (with its code and stderr). */
const StdoutClosedMillis = 1000

export const make = (
  config: ExtensionConfig,
  options: ProcessExtension.Options
): Effect.Effect<Extension, never, Scope.Scope> =>
  Effect.andThen(
    warnAboutPassthrough(config),
    ExtensionCore.make({ config, sessionId: options.sessionId, connect: (events) => connect(config, options, events) })
  )

const connect = Effect.fnUntraced(function* (
  config: ExtensionConfig,
  options: ProcessExtension.Options,
  events: ExtensionCore.TransportEvents
) {
  const name = config.name
  const grace = config.grace_ms
  const child = yield* ProcessExtension.acquire(config, options)
  const pid = child.pid ?? 0

  // The cause by its shape only (`got`), never the line's excerpt: a death cause reaches the audit and the model's notes.
  const connection = McpStdio.connect(child, (why) =>
    events.fail(
      why._tag === "TooLong"
        ? new ReplyTooLong({ extension: name, max_line_bytes: why.maxBytes })
        : why._tag === "Flooded"
          ? new MalformedReply({
              event: "mcp",
              path: "",
              expected: "a server that reads the answers to its own requests",
              got: `over ${why.unreadBytes} bytes of answers unread in its stdin`
            })
          : new MalformedReply({
              event: "mcp",
              path: "",
              expected: "one JSON-RPC message per line from the MCP server",
              got: why.got
            })
    )
  )

  const stderr = yield* ProcessExtension.drainStderr(child, name)

  // Its exit is its death, with the line of stderr that says why; what it wrote just before still counts.
  const exit = Deferred.makeUnsafe<{ readonly code: number | null; readonly signal: string | null }>()
  child.once("exit", (code, signal) => Deferred.doneUnsafe(exit, Exit.succeed({ code, signal })))
  yield* Effect.gen(function* () {
    const { code, signal } = yield* Deferred.await(exit)
    yield* ProcessExtension.ended(child.stdout).pipe(
      Effect.timeout(Duration.millis(Math.min(ExitDrainMillis, grace))),
      Effect.ignore
    )
    const why = StderrTail.errorLine(stderr.tail())
    // The death first: the calls waiting on the server then fail, and their fibers may run on at once (McpStdio.ts).
    events.fail(
      new ExtensionExited(
        why === undefined ? { extension: name, code, signal } : { extension: name, code, signal, stderr: why }
      )
    )
    connection.close(McpStdio.transportError(`the MCP server exited (${signal ?? `code ${code}`})`))
  }).pipe(Effect.forkScoped)

  // Its stdout closed while it runs on: nothing more can answer, so it is dead now, not when a call's bound runs out.
  // After a moment, so that an exit just behind the close (the usual order) is the death instead.
  let closing = false
  child.stdout.once("end", () => {
    const timer = setTimeout(
      () => {
        if (closing || ProcessGroup.leaderExited(child)) return
        events.fail(
          new MalformedReply({
            event: "mcp",
            path: "",
            expected: "an MCP server that keeps its stdout open while it runs",
            got: "its stdout closed"
          })
        )
        connection.close(McpStdio.transportError("the MCP server closed its stdout"))
      },
      Math.min(StdoutClosedMillis, grace)
    )
    timer.unref()
    child.once("exit", () => clearTimeout(timer))
  })

  // The client, started in the background (initialize overlaps the other extensions' start), in this scope.
  // Bounded by the whole startup timeout: the first request's wait (`started`) is the tighter bound.
  const startup = config.startup_timeout_ms
  const client = yield* Deferred.make<McpClient.McpClient, McpClientError>()
  yield* McpClient.make({ name: "abhed", version: "1", timeout: Duration.millis(startup) }).pipe(
    Effect.provideService(McpClient.Transport, connection.transport),
    Effect.tapError((error) =>
      Effect.sync(() =>
        events.fail(
          new SpawnFailed({
            extension: name,
            command: config.command,
            detail: `the MCP server did not complete its start (initialize): ${error.message}`
          })
        )
      )
    ),
    Effect.exit,
    Effect.flatMap((exit) => Deferred.done(client, exit)),
    Effect.forkScoped
  )

  const calls = makeCalls({
    server: name,
    client: Deferred.await(client).pipe(Effect.mapError((e) => `the MCP server did not start: ${e.message}`)),
    warn: (text) => Effect.logWarning(text).pipe(Effect.annotateLogs({ extension: name })),
    timeoutMs: boundOf(config.timeout_ms),
    bound: BoundName
  })
  /**
   * Waits for the server's start (initialize), within `withinMs`: a server that has not started by then is dead, as a
   * process extension that never answers is, with that cause. (A start that failed killed it already.) Its death
   * answers the request in flight, so this never returns then.
   */
  const started = (withinMs: number, setting: string): Effect.Effect<void> =>
    Deferred.await(client).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(withinMs),
        orElse: () =>
          Effect.sync(() =>
            events.fail(
              new SpawnFailed({
                extension: name,
                command: config.command,
                detail:
                  `the MCP server did not complete its start (initialize) within ${withinMs} ms (four fifths of ` +
                  `${setting}; raise it for a server slow to start, one npx downloads first say)`
              })
            )
          ).pipe(Effect.andThen(Effect.never))
      }),
      Effect.catch(() => Effect.never),
      Effect.asVoid
    )
  let exchanges = 0
  const answer = (request: Request): Effect.Effect<object> => {
    const first = exchanges++ === 0
    const withinMs = boundOf(first ? config.startup_timeout_ms : config.timeout_ms)
    // Named as the config names it: the bound alone (four fifths of it) would be a number the user never wrote.
    const setting = first ? "startup_timeout_ms" : "timeout_ms"
    switch (request.event) {
      case "list_tools":
        return Effect.andThen(
          started(withinMs, setting),
          calls.list(
            withinMs,
            () => `the MCP server has not listed its tools within ${withinMs} ms (four fifths of ${setting})`
          )
        )
      case "invoke_tool":
        return calls.invoke(request.tool, request.args)
      default:
        // Never sent (its events are list_tools and invoke_tool): no opinion.
        return Effect.succeed({})
    }
  }

  // The answers being worked out; ending the extension interrupts them (a call in flight is cancelled).
  const running = yield* FiberSet.make<void, never>()
  const run = yield* FiberSet.runtime(running)<never>()
  const stop = Effect.andThen(
    FiberSet.clear(running),
    Effect.sync(() => {
      closing = true
      connection.close(new McpClientError({ reason: new ClosedError({ description: "the extension is closing" }) }))
      child.stdin.end()
    })
  )
  const transport: ExtensionCore.Transport = {
    write: (request) => {
      const id = request.value.id
      run(
        Effect.flatMap(answer(request.value), (reply) =>
          Effect.sync(() => events.read([{ _tag: "Json", value: { ...reply, id } }]))
        )
      )
    },
    catchUp: (then) => then(), // an answer is read when it is worked out: nothing is pending
    terminate: Effect.andThen(stop, ProcessGroup.terminate(child, pid, grace)),
    close: Effect.gen(function* () {
      yield* stop
      yield* ProcessGroup.awaitExit(child, grace)
      // Even after a clean exit: what it left behind in its group is ended too.
      yield* ProcessGroup.terminate(child, pid, grace)
    }),
    pid: child.pid,
    stderrTail: Effect.sync(() => stderr.tail())
  }
  return transport
})
