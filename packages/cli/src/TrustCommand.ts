import { Argument, Command, Flag } from "effect/cli"

import { lazyHandler } from "./LazyHandler.ts"

/**
 * `abhed-ext trust [DIR]`, `trust --list`, `untrust [DIR]` (docs/configuration.md#trust): the explicit act that lets a
 * project's `.abhed/abhed.json` run. `trust` shows every process the project layer would start, with the digests
 * of its scripts, and what changed since it was last trusted; then asks on a terminal, or takes `--yes`.
 *
 * Each command's flags are read at start, to parse the command line; what it does is TrustMain.ts, loaded when it runs.
 */
export const trustFlags = {
  yes: Flag.Boolean("yes").pipe(
    Flag.withAlias("y"),
    Flag.withDescription("trust without asking (for scripts)"),
    Flag.withDefault(false)
  ),
  list: Flag.Boolean("list").pipe(Flag.withDescription("list the trusted projects"), Flag.withDefault(false)),
  dir: Argument.String("dir").pipe(
    Argument.withDescription(
      "the project (default: the current directory; its nearest .abhed up to the repository root)"
    ),
    Argument.optional
  )
}

export const trust = Command.make(
  "trust",
  trustFlags,
  lazyHandler(() => import("./TrustMain.ts").then((m) => m.trustMain))
).pipe(
  Command.withShortDescription(
    "Trust a project's .abhed/abhed.json, bound to its content, so that `run` starts its extensions"
  ),
  Command.withDescription(
    "Show every process a project's config layer would start (name, command, args, cwd, env keys, and each script " +
      "it names with its sha256) and what changed since it was last trusted, then ask (on a terminal) or take --yes. " +
      "Any later change to the config or to a named script makes it untrusted again. Exit codes: 0 trusted, 1 not " +
      "trusted (declined, no terminal, no project), 2 invalid config."
  ),
  Command.withExamples([
    { command: "abhed-ext trust", description: "review and trust the project you are in" },
    { command: "abhed-ext trust --yes ~/src/app", description: "trust without asking" },
    { command: "abhed-ext trust --list", description: "the trusted projects" }
  ])
)

/**
 * `abhed-ext untrust`'s flags and arguments, read at start to parse the command line; what it does is
 * TrustMain.ts, loaded when it runs.
 */
export const untrustFlags = {
  dir: Argument.String("dir").pipe(
    Argument.withDescription("the project (default: the current directory)"),
    Argument.optional
  )
}

export const untrust = Command.make(
  "untrust",
  untrustFlags,
  lazyHandler(() => import("./TrustMain.ts").then((m) => m.untrustMain))
).pipe(
  Command.withShortDescription("Forget the trust of a project: `run` no longer starts its extensions"),
  Command.withExamples([{ command: "abhed-ext untrust", description: "the project you are in" }])
)
