import { Argument, Command, Flag } from "effect/cli"
import { lazyHandler } from "../LazyHandler.ts"

/**
 * `abhed-ext test`'s flags and arguments, read at start to parse the command line; what it does is
 * TestMain.ts, loaded when it runs.
 */
export const flags = {
  config: Flag.String("config").pipe(
    Flag.withAlias("c"),
    Flag.withDescription(
      "the abhed.json whose extensions and policy decide the cases (-: stdin, with the cases from a file)"
    )
  ),
  junit: Flag.String("junit").pipe(
    Flag.withDescription("also write the results as JUnit XML to this file, for a CI system"),
    Flag.optional
  ),
  cases: Argument.String("cases").pipe(Argument.withDescription("a JSONL file of cases, one per line (-: stdin)"))
}

/** `abhed-ext test -c abhed.json CASES.jsonl [--junit OUT.xml]`: docs/cli.md#abhed-ext-test. */
export const test = Command.make(
  "test",
  flags,
  lazyHandler(() => import("./TestMain.ts").then((m) => m.testMain))
).pipe(
  Command.withShortDescription("Check that a config decides a file of cases as expected"),
  Command.withDescription(
    "Send each case of a JSONL file through the config's real extensions and policy, and check what comes of it. A " +
      'case is a tool call and the decision it must get, e.g. {"call":{"tool":"bash","args":{"command":"rm -rf /"}},' +
      '"expect":"deny","by":"guard"}, optionally with the settled "args"; or a tool result and the "content" ' +
      'or "is_error" that must come of it. Prints PASS or FAIL per case (what was expected, what came, which ' +
      "extension) and a summary. Exit codes: 0 every case passed, 1 a case failed (a malformed line is a failed case) " +
      "or the file is unreadable or empty, 2 invalid config, 64 bad usage."
  ),
  Command.withExamples([
    { command: "abhed-ext test -c abhed.json cases.jsonl", description: "check a policy's cases" },
    {
      command: "abhed-ext test -c abhed.json cases.jsonl --junit junit.xml",
      description: "the same, with a report for CI"
    }
  ])
)
