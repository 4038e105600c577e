import { type Reply, serve, stop } from "@abhed/extension/Serve"
import { Console, Effect, FiberSet, Option, Result } from "effect"
import { Argument, CliError, CliOutput, Command, Flag } from "effect/cli"
import { makeAdapter } from "./HookAdapter.ts"
import { type HookFormat, HookFormats } from "./HookFormat.ts"
import { parseMatcher } from "./HookMatcher.ts"
import { runHook } from "./HookRunner.ts"
import * as HookTelemetry from "./HookTelemetry.ts"
import { parseToolNames, toolNames } from "./HookToolNames.ts"
import { InputUnreadable } from "../CliError.ts"
import { failUsage } from "../Usage.ts"
import { commandLine } from "../check/CheckReport.ts"
import { positive } from "../DurationFlags.ts"

/** Below the extension's own default `timeout_ms` (5000), so an overrunning hook is ours to kill, not the host's. */
export const DefaultHookTimeoutMs = 4000

/** A flag value or command `hook` cannot use: exit 64, as for any usage error (Usage.ts). */
const usage = (problem: string) => failUsage(["abhed-ext", "hook"], problem)

const flags = {
  format: Flag.Literals("format", HookFormats).pipe(
    Flag.withDescription("whose hook this is: claude (Claude Code) or gemini (Gemini CLI)")
  ),
  matcher: Flag.String("matcher").pipe(
    Flag.withDescription(
      "the hook's matcher, with the peer's rules (exact names, a | list, or a regex); unmatched calls get {} without a run"
    ),
    Flag.optional
  ),
  toolNames: Flag.String("tool-names").pipe(
    Flag.withDescription("ours=peer tool names over the defaults, e.g. bash=Bash,read=Read"),
    Flag.optional
  ),
  timeoutMs: Flag.Int("timeout-ms").pipe(
    Flag.withDescription(
      "how long one run of the hook may take; then it is killed with everything it started (keep it below the extension's timeout_ms)"
    ),
    Flag.withDefault(DefaultHookTimeoutMs),
    positive
  ),
  failClosed: Flag.Boolean("fail-closed").pipe(
    Flag.withDescription(
      "a run that fails (timeout, crash, cannot start, an exit code other than 0 and 2, stdout over 16 MiB) blocks, instead of being no opinion"
    ),
    Flag.withDefault(false)
  ),
  command: Argument.String("command").pipe(Argument.withDescription("the hook's command (after --)")),
  args: Argument.String("args").pipe(Argument.withDescription("its arguments"), Argument.variadic())
}

/** What `hook` checks of its flags after parsing them: the matcher compiles, the tool names are pairs. */
const settle = (format: HookFormat, matcher: Option.Option<string>, namesSpec: Option.Option<string>) => {
  const parsedMatcher = parseMatcher(format, Option.getOrUndefined(matcher))
  if (Result.isFailure(parsedMatcher)) return Result.fail(`--matcher: ${parsedMatcher.failure}`)
  const overrides = Option.isSome(namesSpec) ? parseToolNames(namesSpec.value) : Result.succeed({})
  if (Result.isFailure(overrides)) return Result.fail(overrides.failure)
  return Result.succeed({ matcher: parsedMatcher.success, overrides: overrides.success })
}

/**
 * Why `abhed-ext hook ARGS` would not start (`args`: what follows `hook`), or undefined when it would: `args` go
 * through this very command's parser and checks, and nothing is run. `import-hooks` checks what it generates with
 * it, since an adapter that exits at startup is a guard lost.
 */
export const hookArgsProblem = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    let started = false
    const problems: Array<string> = []
    const probe = Command.make("hook", flags, ({ format, matcher, toolNames: namesSpec }) =>
      Effect.sync(() => {
        const settled = settle(format, matcher, namesSpec)
        if (Result.isFailure(settled)) problems.push(settled.failure)
        else started = true
      })
    )
    const silent: CliOutput.Presenter = { present: () => Effect.void }
    yield* Command.runWith(probe, { version: "", renderErrors: false })(args).pipe(
      Effect.catchIf(CliError.isCliError, (error) =>
        Effect.sync(() => {
          problems.push(...(error._tag === "ShowHelp" ? error.errors.map((e) => e.message) : [error.message]))
        })
      ),
      Effect.provideService(CliOutput.Presenter, silent)
    )
    return started ? undefined : problems.length > 0 ? problems.join("; ") : "it would print its help and exit"
  })

/**
 * `abhed-ext hook --format claude|gemini [--matcher M] [--tool-names ours=peer,…] [--timeout-ms N] [--fail-closed]
 * -- COMMAND [ARGS…]`: a long-lived extension that runs a Claude Code or Gemini CLI command hook once per event, under
 * veto-only rules (docs/hooks.md). stdout carries replies and nothing else; everything else goes to stderr.
 */
export const hook = Command.make(
  "hook",
  flags,
  Effect.fn("hook")(function* ({ args, command, failClosed, format, matcher, timeoutMs, toolNames: namesSpec }) {
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
).pipe(
  Command.withShortDescription("Run a Claude Code or Gemini CLI command hook as an extension"),
  Command.withDescription(
    "A long-lived extension that runs an existing Claude Code or Gemini CLI command hook once per event: the " +
      "peer's input JSON on its stdin, its exit code and JSON answer mapped back under veto-only rules (deny and " +
      "exit 2 block, ask asks, allow is no opinion, updatedInput rewrites). Each run is bounded by --timeout-ms " +
      "and the hook killed with everything it started on overrun. Put it in abhed.json as an extension's command; see docs/hooks.md."
  ),
  Command.withExamples([
    {
      command: "abhed-ext hook --format claude --matcher Bash -- python3 .claude/hooks/bash_validator.py",
      description: "a Claude Code PreToolUse hook on Bash"
    },
    {
      command: "abhed-ext hook --format gemini --matcher run_shell_command --fail-closed -- .gemini/hooks/guard.sh",
      description: "a Gemini CLI BeforeTool hook that blocks when it cannot answer"
    }
  ])
)
