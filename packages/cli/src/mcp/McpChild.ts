import { spawn } from "node:child_process"
import * as McpStdio from "@abhed/host/mcp/McpStdio"
import { printable } from "@abhed/host/Printable"
import * as StderrTail from "@abhed/host/StderrTail"
import { Effect, type Scope } from "effect"
import type * as McpClient from "effect/ai/McpClient"
import { ClosedError, McpClientError } from "effect/ai/McpClientError"

/**
 * A stdio MCP server as the adapter's child, spoken to over the host's own MCP transport (McpStdio.ts): its bounds
 * are the host's (a message over 8 MiB, a line that is not JSON-RPC, a server that sends requests and never reads the
 * answers: each closes the connection, said once on stderr), and every way the server is lost says what happened: its
 * command not found, its exit code and its last stderr line. The server runs in the adapter's process group (the host
 * ends an extension by signalling its group, so the server goes with the adapter even if the adapter is killed
 * outright) with the adapter's environment (which the host built from the extension's env rules); its stderr passes
 * through to the adapter's, which the host logs. When the adapter's scope closes: the server's stdin is closed, then
 * SIGTERM, then SIGKILL.
 */

/** How long the server has to exit after its stdin is closed, and again after SIGTERM (effect's own close bound). */
const CloseMillis = 5000

/** How long, after the server exits, what it wrote before exiting may still be read before the exit is reported. */
const ExitDrainMillis = 100

/** How long a server whose stdout closed has to exit, for its exit to be what is said. */
const StdoutClosedMillis = 1000

/** The longest stderr line an exit's message repeats. */
const MaxStderrLineChars = 100

/** The command as a message shows it: quoted, printable, its head only. */
const shownCommand = (command: string): string =>
  printable(JSON.stringify(command.length > 60 ? `${command.slice(0, 60)}…` : command))

/** Why the command could not be started, from the spawn error's code. */
export const spawnText = (command: string, code: string | undefined): string => {
  const shown = shownCommand(command)
  switch (code) {
    case "ENOENT":
      return `its command ${shown} was not found (ENOENT: not on PATH, or no such file from the extension's cwd)`
    case "EACCES":
      return `its command ${shown} cannot be run (EACCES: not executable)`
    default:
      return `its command ${shown} could not be started (${code ?? "unknown error"})`
  }
}

/** The server's exit, and the line of its stderr that says why. */
export const exitText = (code: number | null, signal: string | null, stderr: string): string => {
  const line = StderrTail.errorLine(stderr, MaxStderrLineChars)
  const how = signal !== null ? `killed by ${signal}` : `with code ${code}`
  return `it exited ${how}${line === undefined ? " (its stderr is empty)" : `; its last stderr line: ${line}`}`
}

/**
 * The transport to `command args`, started now; `warn` says once on stderr why the connection broke, if it does. The
 * server's resources belong to the caller's scope.
 */
export const stdioTransport = (
  command: string,
  args: ReadonlyArray<string>,
  warn: (text: string) => void
): Effect.Effect<McpClient.Transport, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => start(command, args, warn)),
      (server) => server.stop
    ),
    (server) => server.transport
  )

const start = (command: string, args: ReadonlyArray<string>, warn: (text: string) => void) => {
  const child = spawn(command, [...args], { stdio: ["pipe", "pipe", "pipe"] })
  // Written after the server is gone (EPIPE): its exit says why, not an unhandled error.
  child.stdin.on("error", () => {})
  const stderr = StderrTail.make({ tailBytes: 8 * 1024 })
  child.stderr.on("data", (chunk: Buffer) => {
    stderr.push(chunk)
    process.stderr.write(chunk)
  })
  // Why the connection broke, with the head of the line that broke it, for the operator: said once on stderr, and as
  // why `initialize` failed (the start's failure, on the operator's log). A call's failure, which the model reads,
  // keeps the transport's own words, by the break's kind only.
  let broken: McpClientError | undefined
  const connection = McpStdio.connect(child, (why) => {
    const text = McpStdio.brokenText(why)
    broken = McpStdio.transportError(text)
    warn(`the connection to the MCP server is closed: ${text}`)
  })
  const transport: McpClient.Transport = {
    ...connection.transport,
    request: (message) =>
      message.method === "initialize"
        ? Effect.mapError(connection.transport.request(message), (error) => broken ?? error)
        : connection.transport.request(message)
  }
  const lost = (text: string) => connection.close(McpStdio.transportError(text))
  child.on("error", (error: NodeJS.ErrnoException) => {
    if (child.pid === undefined) lost(spawnText(command, error.code))
  })
  // Its stdout closed while it runs on: nothing more can answer. Said after a while, so that an exit just behind the
  // close (the usual order) is said instead, with its code and stderr.
  child.stdout.once("end", () => {
    setTimeout(() => lost("it closed its stdout"), StdoutClosedMillis).unref()
  })
  child.once("exit", (code, signal) => {
    const report = () => lost(exitText(code, signal, stderr.tail()))
    // What it wrote just before exiting is read first (the answer to a call, or why it broke).
    if (child.stdout.readableEnded) return report()
    const timer = setTimeout(report, ExitDrainMillis)
    child.stdout.once("end", () => {
      clearTimeout(timer)
      report()
    })
  })

  /** Resolves true once the server has exited (at once if it has, or never started), false after `millis`. */
  const exited = (millis: number): Effect.Effect<boolean> =>
    child.pid === undefined || child.exitCode !== null || child.signalCode !== null
      ? Effect.succeed(true)
      : Effect.callback<boolean>((resume) => {
          const done = () => {
            clearTimeout(timer)
            resume(Effect.succeed(true))
          }
          const timer = setTimeout(() => {
            child.off("exit", done)
            resume(Effect.succeed(false))
          }, millis)
          child.once("exit", done)
          return Effect.sync(() => {
            clearTimeout(timer)
            child.off("exit", done)
          })
        })

  const stop = Effect.gen(function* () {
    connection.close(new McpClientError({ reason: new ClosedError({ description: "the adapter is closing" }) }))
    child.stdin.end()
    if (yield* exited(CloseMillis)) return
    child.kill("SIGTERM")
    if (yield* exited(CloseMillis)) return
    child.kill("SIGKILL")
  })
  return { transport, stop }
}
