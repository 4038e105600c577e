import { type Reply, serve, stop } from "@abhed/extension/Serve"
import { Console, Effect, FiberSet, Result } from "effect"
import type { Command } from "effect/cli"
import { makeAdapter } from "./HookAdapter.ts"
import { type flags, settle, usage } from "./HookFlags.ts"
import { runHook } from "./HookRunner.ts"
import * as HookTelemetry from "./HookTelemetry.ts"
import { toolNames } from "./HookToolNames.ts"
import { InputUnreadable } from "../CliError.ts"
import { commandLine } from "../check/CheckReport.ts"

/** What `abhed-ext hook` does once its flags are parsed (HookCommand.ts): serve the adapter on stdin and stdout. */
export const serveHook = Effect.fn("hook")(function* ({
  args,
  command,
  failClosed,
  format,
  matcher,
  timeoutMs,
  toolNames: namesSpec
}: Command.Command.Config.Infer<typeof flags>) {
  const settled = settle(format, matcher, namesSpec)
  if (Result.isFailure(settled)) return yield* usage(settled.failure)
  const cwd = process.cwd()
  // The project folder, as the peers tell their hooks (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/…`).
  const env: NodeJS.ProcessEnv =
    format === "claude"
      ? { ...process.env, CLAUDE_PROJECT_DIR: process.env["CLAUDE_PROJECT_DIR"] ?? cwd }
      : {
          ...process.env,
          GEMINI_PROJECT_DIR: process.env["GEMINI_PROJECT_DIR"] ?? cwd,
          CLAUDE_PROJECT_DIR: process.env["CLAUDE_PROJECT_DIR"] ?? cwd
        }
  const label = commandLine([command, ...args])
  const telemetry = HookTelemetry.fromEnv(process.env, command, format)
  for (const w of telemetry.warnings) yield* Console.error(`abhed-ext hook: warning: ${w}`)
  const adapter = makeAdapter(
    {
      format,
      matcher: settled.success.matcher,
      names: toolNames(format, settled.success.overrides),
      failClosed,
      label,
      cwd,
      now: () => new Date().toISOString(),
      observe: telemetry.observe
    },
    (input) => runHook({ command, args, env }, input, timeoutMs)
  )
  // Served by the SDK's loop (one reply per line, in order; stdout kept for replies). Each line is answered in a
  // fiber of this scope: stopping the adapter interrupts a running hook, whose finalizer kills its process tree.
  // Inside the telemetry layer, whose end flushes the export (within its timeout) once every reply is written.
  const served = yield* Effect.gen(function* () {
    const runFork = yield* FiberSet.makeRuntimePromise<never, Reply>()
    const answerLine = (line: string): Promise<Reply> =>
      runFork(
        adapter.answer(line).pipe(
          Effect.tap((answer) => Effect.forEach(answer.log, (l) => Console.error(`abhed-ext hook: ${l}`))),
          Effect.map((answer): Reply => `${answer.line}\n`),
          Effect.catchTag("UnreadableRequest", (unreadable) => Effect.succeed(stop(unreadable.reason)))
        )
      )
    return yield* Effect.promise(() => serve(answerLine))
  }).pipe(Effect.provide(telemetry.layer))
  if (served._tag === "Stop") {
    // The last line on stderr: the host shows it as the cause of the adapter's death.
    yield* Console.error(`abhed-ext hook: ${served.reason}`)
    return yield* new InputUnreadable({ file: "stdin", detail: served.reason })
  }
}, Effect.scoped)
