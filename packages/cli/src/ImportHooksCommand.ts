import { basename, dirname, extname, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { readRegularFile } from "@abhed/host/RegularFile"
import { Console, Effect, Option, Result, Stdio, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { InputUnreadable } from "./CliError.ts"
import { HookFormats } from "./HookFormat.ts"
import { parseSettings, readSettings, toConfig } from "./HookSettings.ts"

/**
 * This CLI, started by the same Node: what the generated config runs as each adapter. `bin` beside this file, with
 * this file's extension: `bin.ts` in the workspace, `bin.js` in a build.
 */
const launch = {
  command: process.execPath,
  args: [fileURLToPath(new URL(`./bin${extname(fileURLToPath(import.meta.url))}`, import.meta.url))]
}

/**
 * The settings' text: `-` is stdin, as everywhere a file is read. A path must be a regular file: a FIFO is refused at
 * once (its open would block, and hold the CLI past SIGTERM).
 */
const readInput = (settings: string): Effect.Effect<string, InputUnreadable, Stdio.Stdio> =>
  settings === "-"
    ? Effect.gen(function*() {
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
const projectDir = (file: string): string => {
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
    settings: Argument.String("settings").pipe(Argument.withDescription("a Claude Code or Gemini CLI settings.json"))
  },
  Effect.fn("import-hooks")(function*({ format, settings }) {
    const text = yield* readInput(settings)
    const parsed = parseSettings(text, Option.getOrUndefined(format))
    if (Result.isFailure(parsed)) return yield* new InputUnreadable({ file: settings, detail: parsed.failure })
    const chosen = parsed.success.format
    const read = readSettings(chosen, parsed.success.settings)
    if (Result.isFailure(read)) return yield* new InputUnreadable({ file: settings, detail: read.failure })
    for (const s of read.success.skipped) yield* Console.error(`${settings}: ${s.where}: not carried over: ${s.why}`)
    for (const w of read.success.warnings) yield* Console.error(`${settings}: ${w.where}: carried over, but ${w.why}`)
    yield* Console.error(
      `${settings}: ${read.success.hooks.length} ${chosen === "claude" ? "Claude Code" : "Gemini CLI"} command hook(s) carried over` +
        (read.success.skipped.length > 0 ? `, ${read.success.skipped.length} not (above)` : "")
    )
    yield* Console.log(JSON.stringify(toConfig(read.success, launch, projectDir(settings)), null, 2))
  }, Effect.tapError((e) => Console.error(e.message)))
).pipe(
  Command.withShortDescription("Turn a Claude Code or Gemini CLI settings.json's command hooks into an abhed.json"),
  Command.withDescription(
    "Prints an abhed.json with one `abhed-ext hook` extension per command hook of a Claude Code or Gemini CLI " +
      "settings.json (event, matcher and timeout carried over) and names on stderr every hook it could not carry " +
      "over, and why (prompt or agent hooks, events with no counterpart). See docs/hooks.md."
  ),
  Command.withExamples([
    { command: "abhed-ext import-hooks .claude/settings.json > abhed.json", description: "migrate a project's Claude Code hooks" },
    { command: "abhed-ext import-hooks --format gemini .gemini/settings.json", description: "migrate Gemini CLI hooks" }
  ])
)
