import { Flag } from "effect/cli"

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
