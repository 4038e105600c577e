import { Argument, Command, Flag } from "effect/cli"
import { lazyHandler } from "../LazyHandler.ts"

/**
 * `abhed-ext replay`'s flags and arguments, read at start to parse the command line; what it does is
 * ReplayMain.ts, loaded when it runs.
 */
export const flags = {
  config: Flag.String("config").pipe(
    Flag.withAlias("c"),
    Flag.withDescription("the abhed.json to re-decide the recorded events under (-: stdin, with the audits from files)")
  ),
  failOn: Flag.Literals("fail-on", ["any", "looser"]).pipe(
    Flag.withDescription("exit 1 when any decision changed (any, default), or only when one became looser (looser)"),
    Flag.withDefault("any" as const)
  ),
  json: Flag.Boolean("json").pipe(
    Flag.withDescription("print one JSON report instead of text"),
    Flag.withDefault(false)
  ),
  audits: Argument.String("audit").pipe(
    Argument.withDescription("audit files written by abhed-ext run --audit (-: stdin)"),
    Argument.atLeast(1)
  )
}

/** `abhed-ext replay -c NEW.json AUDIT.jsonl… [--fail-on any|looser] [--json]`: docs/cli.md#abhed-ext-replay. */
export const replay = Command.make(
  "replay",
  flags,
  lazyHandler(() => import("./ReplayMain.ts").then((m) => m.replayMain))
).pipe(
  Command.withShortDescription("Re-decide recorded sessions under another config, and show what changes"),
  Command.withDescription(
    "Re-decide every tool_call of audit files (abhed-ext run --audit), and every tool_result and context whose " +
      "content the audit holds (--audit-content full), under a config's real extensions and policy. Extensions " +
      "receive the recorded events; no tool ever runs. Prints each changed decision (before, after, by which " +
      "extension), the events that cannot be replayed and why, and a summary. Exit codes: 0 nothing changed (with " +
      "--fail-on looser: nothing became looser), 1 a decision changed, an audit line is not a record or an extension did not answer, 2 invalid " +
      "config, 64 bad usage."
  ),
  Command.withExamples([
    { command: "abhed-ext replay -c new.json audit.jsonl", description: "what the new config would have decided" },
    {
      command: "abhed-ext replay -c new.json --fail-on looser audits/*.jsonl",
      description: "a CI gate that allows tightening"
    }
  ])
)
