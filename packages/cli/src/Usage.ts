import { Console, Effect, Layer, Runtime, Schema } from "effect"
import { CliError, CliOutput } from "effect/cli"
import { colourOn } from "./Style.ts"

/**
 * How the CLI answers a command line it cannot use, and requests for help (docs/design.md#output, docs/cli.md): the
 * problem and a one-line hint on stderr, exit 64 (EX_USAGE), never the full help on stdout. Help asked for
 * goes to stdout, except for commands whose stdout is a data channel (`run`, `hook` and `mcp` print JSON lines only):
 * theirs goes to stderr, and so does their `--version`.
 */

/** Commands whose stdout carries JSON lines and nothing else. */
export const DataCommands: ReadonlySet<string> = new Set(["run", "hook", "mcp"])

/** The command line was wrong (already reported on stderr): exit 64. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  command: Schema.String,
  problems: Schema.Array(Schema.String)
}) {
  override get [Runtime.errorExitCode](): number {
    return 64
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return `${this.command}: ${this.problems.join("; ")}`
  }
}

/** The lines written for a usage error: each problem, then where to read more. */
export const usageText = (commandPath: ReadonlyArray<string>, problems: ReadonlyArray<string>): string => {
  const command = commandPath.join(" ")
  return [...problems.map((problem) => `${command}: ${problem}`), `(\`${command} --help\` for more)`].join("\n")
}

/** A command line a command cannot use, found after parsing: the problem and the hint on stderr, then exit 64. */
export const failUsage = (commandPath: ReadonlyArray<string>, problem: string): Effect.Effect<never, UsageError> =>
  Effect.andThen(
    Console.error(usageText(commandPath, [problem])),
    Effect.fail(new UsageError({ command: commandPath.join(" "), problems: [problem] }))
  )

const formatterFor = (stream: NodeJS.WriteStream) => CliOutput.defaultFormatter({ colors: colourOn(stream) })

/** Commands that run a program given after `--`, and the synopsis of that part. */
const ProgramCommands: ReadonlyMap<string, string> = new Map([
  ["check", "the extension"],
  ["hook", "the hook"],
  ["mcp", "the MCP server"]
])

/**
 * `abhed-ext check python3 -u guard.py`: without `--`, the program's own flags are read as the command's, and the
 * problem (`Unrecognized flag: -u`) does not say where they belong.
 */
const programFlagsHint = (
  commandPath: ReadonlyArray<string>,
  errors: ReadonlyArray<{ readonly _tag: string }>,
  separated: boolean
): ReadonlyArray<string> => {
  const command = commandPath[commandPath.length - 1] ?? ""
  const program = ProgramCommands.get(command)
  if (program === undefined || separated || !errors.some((e) => e._tag === "UnrecognizedOption")) return []
  return [`${program}'s own flags go after --: abhed-ext ${command} [flags] -- COMMAND [ARGS...]`]
}

/**
 * `dataCommand`: the command line runs `run`, `hook` or `mcp`, whose `--version` goes to stderr as its help does.
 * `separated`: it has a `--`.
 */
const presenter = (dataCommand: boolean, separated: boolean): CliOutput.Presenter => ({
  present: (event) =>
    Effect.suspend(() => {
      switch (event._tag) {
        case "Help": {
          const toStderr = event.commandPath.some((name) => DataCommands.has(name))
          const text = formatterFor(toStderr ? process.stderr : process.stdout).formatHelpDoc(event.helpDoc)
          return toStderr ? Console.error(text) : Console.log(text)
        }
        case "InvalidInvocation":
          return Console.error(
            usageText(event.commandPath, [
              ...event.errors.map((error) => error.message),
              ...programFlagsHint(event.commandPath, event.errors, separated)
            ])
          )
        case "Version": {
          // The event does not say which command it came from (`abhed-ext run -v`): the caller does.
          const text = formatterFor(dataCommand ? process.stderr : process.stdout).formatVersion(
            event.name,
            event.version
          )
          return dataCommand ? Console.error(text) : Console.log(text)
        }
      }
    })
})

/** The presenter above, for `Command.run`. */
export const layerPresenter = (dataCommand: boolean, separated: boolean): Layer.Layer<never> =>
  CliOutput.layerPresenter(presenter(dataCommand, separated))

/**
 * Turns effect/cli's `ShowHelp` failure for a bad command line (it carries the problems) into `UsageError`, exit
 * 64; `ShowHelp` without problems (help shown because it was asked for) ends the run with exit 0.
 */
export const exitCodes = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A | void, E | UsageError, R> =>
  Effect.catchIf(
    program,
    (error): error is E & CliError.ShowHelp => CliError.isCliError(error) && error._tag === "ShowHelp",
    (help) =>
      help.errors.length === 0
        ? Effect.void
        : Effect.fail(
            new UsageError({ command: help.commandPath.join(" "), problems: help.errors.map((e) => e.message) })
          )
  )
