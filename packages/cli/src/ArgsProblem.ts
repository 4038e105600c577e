import { Effect, Result } from "effect"
import { CliError, CliOutput, Command } from "effect/cli"

/**
 * Why a command would not start with `args` (what follows its name), or undefined when it would: `args` go through
 * the command's own `flags` and the `check` its handler makes of them, silently, and nothing is run. `import-hooks`
 * and `import-mcp` check the adapter lines they write with it, since an adapter that exits at startup is a guard, or a
 * server's tools, lost.
 */
export const argsProblem = <const Flags extends Command.Command.Config>(
  name: string,
  flags: Flags,
  check: (parsed: Command.Command.Config.Infer<Flags>) => Result.Result<unknown, string>,
  args: ReadonlyArray<string>
) =>
  Effect.gen(function* () {
    let started = false
    const problems: Array<string> = []
    const probe = Command.make(name, flags, (parsed) =>
      Effect.sync(() => {
        const checked = check(parsed)
        if (Result.isFailure(checked)) problems.push(checked.failure)
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
