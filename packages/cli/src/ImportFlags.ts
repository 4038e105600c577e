import { Console, Effect, FileSystem, Option } from "effect"
import { Flag } from "effect/cli"
import * as NodePath from "node:path"
import { OutputUnwritable } from "./CliError.ts"
import { jsonText } from "./JsonText.ts"

/**
 * The flags `import-hooks` and `import-mcp` share: where the generated config's adapter comes from, and where the
 * config goes.
 */
export const ImportFlags = {
  adapterCommand: Flag.String("adapter-command").pipe(
    Flag.withDescription("the program each extension runs as the adapter (default: abhed-ext, from PATH)"),
    Flag.optional
  ),
  thisCli: Flag.Boolean("this-cli").pipe(
    Flag.withDescription(
      "run the adapter as this Node and this CLI, by absolute paths (for this machine, not for a commit)"
    ),
    Flag.withDefault(false)
  ),
  output: Flag.String("output").pipe(
    Flag.withAlias("o"),
    Flag.withDescription("write the config to this file instead of stdout; cwd is then relative to its folder"),
    Flag.optional
  )
}

/**
 * The generated config: to `output` (newline-terminated, as a committed file should be; `source: written to` on
 * stderr) or to stdout.
 */
export const writeConfig = (config: unknown, output: Option.Option<string>, source: string) =>
  Effect.gen(function* () {
    const json = jsonText(JSON.stringify(config, null, 2))
    if (Option.isNone(output)) return yield* Console.log(json)
    const fs = yield* FileSystem.FileSystem
    yield* fs.writeFileString(output.value, `${json}\n`).pipe(
      Effect.mapError(
        (e) =>
          new OutputUnwritable({
            file: output.value,
            // Not "NotFound: FileSystem.writeFile (…)": what is not found is the folder the file would go in.
            detail:
              e.reason._tag === "NotFound" ? `its folder ${NodePath.dirname(output.value)} does not exist` : e.message
          })
      )
    )
    yield* Console.error(`${source}: written to ${output.value}`)
  })
