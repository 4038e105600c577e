import { printable } from "@abhed/host/Printable"
import { Console, Effect, Option, Result } from "effect"
import { Command } from "effect/cli"
import { AdapterWouldNotStart, InputUnreadable } from "../CliError.ts"
import { writeConfig } from "../ImportFlags.ts"
import { hookArgsProblem } from "./HookCommand.ts"
import { DefaultHookTimeoutMs } from "./HookFlags.ts"
import { importNotes, toConfig } from "./HookConfig.ts"
import { parseSettings, readSettings } from "./HookSettings.ts"
import { type flags, adapterLaunch, configFolder, projectDir, readInput, relativeCwd } from "./ImportHooksCommand.ts"

/** What `abhed-ext import-hooks` does once its flags are parsed (ImportHooksCommand.ts). */
export const importHooksMain = Effect.fn("import-hooks")(
  function* ({ adapterCommand, format, output, settings, thisCli }: Command.Command.Config.Infer<typeof flags>) {
    const text = yield* readInput(settings)
    const parsed = parseSettings(text, Option.getOrUndefined(format))
    if (Result.isFailure(parsed)) return yield* new InputUnreadable({ file: settings, detail: parsed.failure })
    const chosen = parsed.success.format
    const read = readSettings(chosen, parsed.success.settings)
    if (Result.isFailure(read)) return yield* new InputUnreadable({ file: settings, detail: read.failure })
    // The settings' own text (commands, types, matchers) is shown escaped: a hostile file must not drive the terminal.
    for (const s of read.success.skipped)
      yield* Console.error(printable(`${settings}: ${s.where}: not carried over: ${s.why}`))
    for (const w of read.success.warnings)
      yield* Console.error(printable(`${settings}: ${w.where}: carried over, but ${w.why}`))
    for (const s of read.success.switches ?? []) yield* Console.error(printable(`${settings}: ${s.where}: ${s.why}`))
    yield* Console.error(
      `${settings}: ${read.success.hooks.length} ${chosen === "claude" ? "Claude Code" : "Gemini CLI"} command hook(s) carried over` +
        (read.success.skipped.length > 0 ? `, ${read.success.skipped.length} not (above)` : "")
    )
    const launch = adapterLaunch(thisCli, adapterCommand)
    const configDir = configFolder(output)
    const config = toConfig(read.success, launch, relativeCwd(configDir, projectDir(settings)))
    // Start-check: every adapter's flags go through the adapter's own parser and checks; one that would exit at
    // startup is a guard lost, so nothing is written.
    const problems: Array<string> = []
    for (const extension of config.extensions) {
      const args = Array.isArray(extension["args"]) ? extension["args"].map(String) : []
      const problem = yield* hookArgsProblem(args.slice(launch.args.length + 1))
      if (problem !== undefined)
        problems.push(`${settings}: extension ${String(extension["name"])} would not start: ${problem}`)
    }
    if (problems.length > 0) return yield* new AdapterWouldNotStart({ problems })
    for (const note of importNotes(read.success, DefaultHookTimeoutMs))
      yield* Console.error(printable(`${settings}: ${note}`))
    yield* writeConfig(config, output, settings)
  },
  Effect.tapError((e) => Console.error(printable(e.message)))
)
