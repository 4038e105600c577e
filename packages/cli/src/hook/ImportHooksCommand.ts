import { basename, dirname, extname, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { printable } from "@abhed/host/Printable"
import { readRegularFile } from "@abhed/host/RegularFile"
import { Console, Effect, Option, Result, Stdio, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { AdapterWouldNotStart, InputUnreadable } from "../CliError.ts"
import { ImportFlags, writeConfig } from "../ImportFlags.ts"
import { DefaultHookTimeoutMs, hookArgsProblem } from "./HookCommand.ts"
import { type AdapterLaunch, importNotes, toConfig } from "./HookConfig.ts"
import { HookFormats } from "./HookFormat.ts"
import { parseSettings, readSettings } from "./HookSettings.ts"

/** What the generated config runs as each adapter, unless told otherwise: `abhed-ext`, from PATH. */
export const onPath: AdapterLaunch = { command: "abhed-ext", args: [] }

/**
 * This CLI, started by the same Node (`--this-cli`): `bin` in the folder above this one, with this file's extension
 * (`bin.ts` in the workspace, `bin.js` in a build). Absolute paths: for this machine, not for a commit.
 */
export const thisCliLaunch: AdapterLaunch = {
  command: process.execPath,
  args: [fileURLToPath(new URL(`../bin${extname(fileURLToPath(import.meta.url))}`, import.meta.url))]
}

/** `dir` relative to `from`, as a config's `cwd` (`.` for the same folder, `/` separators). */
export const relativeCwd = (from: string, dir: string): string => {
  const rel = relative(from, dir)
  return rel === "" ? "." : rel.split(sep).join("/")
}

/**
 * The settings' text: `-` is stdin, as everywhere a file is read. A path must be a regular file: a FIFO is refused at
 * once (its open would block, and hold the CLI past SIGTERM).
 */
export const readInput = (settings: string): Effect.Effect<string, InputUnreadable, Stdio.Stdio> =>
  settings === "-"
    ? Effect.gen(function* () {
        return yield* (yield* Stdio.Stdio).stdin.pipe(
          Stream.decodeText(),
          Stream.mkString,
          Effect.mapError((e) => new InputUnreadable({ file: "stdin", detail: e.message }))
        )
      })
    : readRegularFile(settings, "; give it as a file, or on stdin with -").pipe(
        Effect.mapError((e) => new InputUnreadable({ file: settings, detail: e.detail }))
      )

/** The project folder of a settings file: the parent of `.claude/` or `.gemini/`, else the file's own folder. */
export const projectDir = (file: string): string => {
  const dir = dirname(resolve(file))
  return basename(dir) === ".claude" || basename(dir) === ".gemini" ? dirname(dir) : dir
}

/**
 * `abhed-ext import-hooks PATH/TO/settings.json [--format claude|gemini]`: prints an abhed.json with one
 * `abhed-ext hook` extension per command hook of the file; on stderr, each hook it could not carry over and why.
 */
export const importHooks = Command.make(
  "import-hooks",
  {
    format: Flag.Literals("format", HookFormats).pipe(
      Flag.withDescription("whose settings these are (default: told by the event names in the file)"),
      Flag.optional
    ),
    ...ImportFlags,
    settings: Argument.String("settings").pipe(Argument.withDescription("a Claude Code or Gemini CLI settings.json"))
  },
  Effect.fn("import-hooks")(
    function* ({ adapterCommand, format, output, settings, thisCli }) {
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
      yield* Console.error(
        `${settings}: ${read.success.hooks.length} ${chosen === "claude" ? "Claude Code" : "Gemini CLI"} command hook(s) carried over` +
          (read.success.skipped.length > 0 ? `, ${read.success.skipped.length} not (above)` : "")
      )
      const launch = thisCli
        ? thisCliLaunch
        : Option.isSome(adapterCommand)
          ? { command: adapterCommand.value, args: [] }
          : onPath
      // The host resolves a relative cwd against the config file's folder: the output's, or where `> abhed.json` lands.
      const configDir = Option.isSome(output) ? dirname(resolve(output.value)) : process.cwd()
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
).pipe(
  Command.withShortDescription("Turn a Claude Code or Gemini CLI settings.json's command hooks into an abhed.json"),
  Command.withDescription(
    "Prints an abhed.json with one `abhed-ext hook` extension per command hook of a Claude Code or Gemini CLI " +
      "settings.json (event, matcher and timeout carried over) and names on stderr every hook it could not carry " +
      "over, and why (prompt or agent hooks, events with no counterpart). See docs/hooks.md."
  ),
  Command.withExamples([
    {
      command: "abhed-ext import-hooks .claude/settings.json > abhed.json",
      description: "migrate a project's Claude Code hooks"
    },
    { command: "abhed-ext import-hooks --format gemini .gemini/settings.json", description: "migrate Gemini CLI hooks" }
  ])
)
