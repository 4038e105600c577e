import { Command, Flag } from "effect/cli"
import { nonNegative } from "./DurationFlags.ts"
import { lazyHandler } from "./LazyHandler.ts"

/**
 * `abhed-ext list`'s flags and arguments, read at start to parse the command line; what it does is
 * ListMain.ts, loaded when it runs.
 */
export const flags = {
  config: Flag.String("config").pipe(
    Flag.withAlias("c"),
    Flag.withDescription("the abhed.json to load; default: the managed, user and (trusted) project layers"),
    Flag.optional
  ),
  watchMs: Flag.Int("watch-ms").pipe(
    Flag.withDescription(
      "how long an extension that takes neither session_start nor list_tools is watched for an exit at startup"
    ),
    Flag.withDefault(1000),
    nonNegative
  ),
  json: Flag.Boolean("json").pipe(
    Flag.withDescription("print one JSON document instead of text"),
    Flag.withDefault(false)
  )
}

export const list = Command.make(
  "list",
  flags,
  lazyHandler(() => import("./ListMain.ts").then((m) => m.listMain))
).pipe(
  Command.withShortDescription("Start a config's extensions and show each: live or dead, its events, rules, tools"),
  Command.withDescription(
    "Start every extension of a config, probe it as an agent would (session_start, then list_tools), close it, and " +
      "print each: live or dead (with the cause), the events it receives, its match rules, on_failure, timeouts, " +
      "and the tools it declared. Without --config, the config layers of where it stands; a project layer that is " +
      "not trusted is not started, and is reported with what to run to trust it. Exit codes: 0 listed (dead " +
      "extensions included), 2 invalid config, 64 bad usage."
  ),
  Command.withExamples([
    { command: "abhed-ext list -c abhed.json", description: "what the config sets up, and whether it starts" },
    {
      command: "abhed-ext list -c abhed.json --json | jq '.extensions[] | select(.state == \"dead\")'",
      description: "the dead ones"
    }
  ])
)
