import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Logger, Runtime, Stdio } from "effect"
import { Command } from "effect/cli"
import { audit } from "./audit/AuditCommand.ts"
import { test } from "./casetest/TestCommand.ts"
import { check } from "./check/CheckCommand.ts"
import { demo, showDemo } from "./demo/DemoCommand.ts"
import { hook } from "./hook/HookCommand.ts"
import { importHooks } from "./hook/ImportHooksCommand.ts"
import { list } from "./ListCommand.ts"
import { mcp } from "./mcp/McpCommand.ts"
import { importMcp } from "./mcp-import/ImportMcpCommand.ts"
import { replay } from "./replay/ReplayCommand.ts"
import { run } from "./run/RunCommand.ts"
import { trust, untrust } from "./TrustCommand.ts"
import { DataCommands, exitCodes, failUsage, layerPresenter, type UsageError } from "./Usage.ts"
import { Version } from "./Version.ts"

export { Version }

/**
 * `abhed-ext` and its commands (docs/cli.md). With no subcommand it runs the demo. Each command's file holds its
 * definition; what it does is loaded when it runs (LazyHandler.ts), so that a start loads one command's code.
 */
export const cli = Command.make("abhed-ext", {}, showDemo).pipe(
  Command.withDescription(
    "Run, check, test and demo Abhed extensions; read an audit and replay recorded sessions under another config " +
      "(audit, replay); run Claude Code and Gemini CLI command hooks (hook, import-hooks) and MCP servers (mcp, " +
      "import-mcp) as extensions. With no command, runs the demo. Exit " +
      "codes: 0 success, 1 failure (a failed check or test case, a changed replay decision, unreadable input), 2 " +
      "invalid config, 64 bad usage."
  ),
  Command.withExamples([
    { command: "abhed-ext", description: "run the demo" },
    { command: "abhed-ext run --config abhed.json session.jsonl", description: "decide every request of a session" },
    { command: "abhed-ext check -- bash my-extension.sh", description: "check that an extension follows the protocol" },
    {
      command: "abhed-ext import-hooks .claude/settings.json > abhed.json",
      description: "bring your Claude Code hooks"
    }
  ]),
  Command.withSubcommands([
    run,
    check,
    demo,
    hook,
    importHooks,
    importMcp,
    list,
    trust,
    untrust,
    test,
    replay,
    audit,
    mcp
  ])
)

/** Global flags that take a value: the word after them is not the command. */
const ValueFlags: ReadonlySet<string> = new Set(["--log-level", "--completions"])

/** The words before `--`: what follows is an extension's or a hook's own command line. */
const headOf = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const end = args.indexOf("--")
  return end === -1 ? args : args.slice(0, end)
}

/** The command the line runs: its first word that is neither a flag nor a global flag's value. */
const commandOf = (args: ReadonlyArray<string>): string | undefined => {
  const head = headOf(args)
  return head.find((arg, i) => !arg.startsWith("-") && !ValueFlags.has(head[i - 1] ?? ""))
}

/**
 * `run`, `hook` and `mcp` print JSON lines on stdout and nothing else (docs/design.md#output), so the global flags that
 * print something else there (`--wizard`'s prompts, `--completions`' script) are a usage error on them rather
 * than lines a script would try to parse. Both work on `abhed-ext` itself and on the other commands.
 */
export const dataCommandFlags = (args: ReadonlyArray<string>): Effect.Effect<void, UsageError> => {
  const head = headOf(args)
  const command = commandOf(args)
  if (command !== "run" && command !== "hook" && command !== "mcp") return Effect.void
  const flag = head.find((arg) => ["--wizard", "--completions"].some((f) => arg === f || arg.startsWith(`${f}=`)))
  if (flag === undefined) return Effect.void
  const name = flag.split("=")[0] ?? flag
  return failUsage(
    ["abhed-ext", command],
    `${name} is not available on ${command}, whose stdout carries JSON lines and nothing else; use \`abhed-ext ${name}\``
  )
}

// Logs (a dead extension's warning, extensions' stderr at --log-level debug) go to stderr: stdout carries the
// output lines that scripts parse (docs/design.md#output), and Effect's default logger would print them there.
// A crash report (a defect's stack trace, a failure nobody reported) is a log too: it is written here, inside the
// stderr setting, as runMain would write it. runMain's own report runs outside `main`, where it would go to stdout,
// so bin.ts turns it off (`disableErrorReporting`). A bad command line is reported by Usage.ts: problems and a
// hint on stderr, exit 64.
export const main = Effect.gen(function* () {
  const args = yield* (yield* Stdio.Stdio).args
  yield* dataCommandFlags(args)
  yield* Command.run(cli, { version: Version }).pipe(
    Effect.provide(layerPresenter(DataCommands.has(commandOf(args) ?? ""), args.includes("--")))
  )
}).pipe(
  exitCodes,
  Effect.provide(NodeServices.layer),
  Effect.tapCause((cause) =>
    Cause.hasInterruptsOnly(cause) || !Runtime.getErrorReported(Cause.squash(cause))
      ? Effect.void
      : Effect.logError(cause)
  ),
  Effect.provideService(Logger.LogToStderr, true)
)
