import { basename, dirname, extname, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { readRegularFile } from "@abhed/host/RegularFile"
import { Effect, Option, Stdio, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { InputUnreadable } from "../CliError.ts"
import type { AdapterLaunch } from "./HookConfig.ts"
import { HookFormats } from "./HookFormat.ts"
import { ImportFlags } from "../ImportFlags.ts"
import { lazyHandler } from "../LazyHandler.ts"

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

/** The adapter the generated config runs: this CLI (`--this-cli`), `--adapter-command`'s program, or `abhed-ext`. */
export const adapterLaunch = (thisCli: boolean, adapterCommand: Option.Option<string>): AdapterLaunch =>
  thisCli ? thisCliLaunch : Option.isSome(adapterCommand) ? { command: adapterCommand.value, args: [] } : onPath

/**
 * The folder a generated config's relative `cwd` is resolved against (the host resolves it against the config file's
 * folder): the output's, or where `> abhed.json` lands.
 */
export const configFolder = (output: Option.Option<string>): string =>
  Option.isSome(output) ? dirname(resolve(output.value)) : process.cwd()

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
 * `abhed-ext import-hooks`'s flags and arguments, read at start to parse the command line; what it does is
 * ImportHooksMain.ts, loaded when it runs.
 */
export const flags = {
  format: Flag.Literals("format", HookFormats).pipe(
    Flag.withDescription("whose settings these are (default: told by the event names in the file)"),
    Flag.optional
  ),
  ...ImportFlags,
  settings: Argument.String("settings").pipe(Argument.withDescription("a Claude Code or Gemini CLI settings.json"))
}

/**
 * `abhed-ext import-hooks PATH/TO/settings.json [--format claude|gemini]`: prints an abhed.json with one
 * `abhed-ext hook` extension per command hook of the file; on stderr, each hook it could not carry over and why.
 */
export const importHooks = Command.make(
  "import-hooks",
  flags,
  lazyHandler(() => import("./ImportHooksMain.ts").then((m) => m.importHooksMain))
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
