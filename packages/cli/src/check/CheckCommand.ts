import { Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { nonNegative, positive } from "../DurationFlags.ts"
import { lazyHandler } from "../LazyHandler.ts"

/** `--call`: a JSON object with a non-empty `tool` and an `args` object (default `{}`). */
const SampleCallJson = Schema.fromJsonString(
  Schema.Struct({
    tool: Schema.NonEmptyString,
    args: Schema.Record(Schema.String, Schema.Unknown).pipe(Schema.optionalKey)
  })
)

/**
 * `abhed-ext check`'s flags and arguments, read at start to parse the command line; what it does is
 * CheckMain.ts, loaded when it runs.
 */
export const flags = {
  timeoutMs: Flag.Int("timeout-ms").pipe(
    Flag.withDescription("how long each reply may take, in ms (the host's timeout_ms)"),
    Flag.withDefault(5000),
    positive
  ),
  startupTimeoutMs: Flag.Int("startup-timeout-ms").pipe(
    Flag.withDescription("how long the first reply may take, start-up included, in ms (startup_timeout_ms)"),
    Flag.withDefault(10000),
    positive
  ),
  quietMs: Flag.Int("quiet-ms").pipe(
    Flag.withDescription(
      "how long stdout is watched for unsolicited lines before the first request and after each reply"
    ),
    Flag.withDefault(50),
    nonNegative
  ),
  graceMs: Flag.Int("grace-ms").pipe(
    Flag.withDescription("how long the extension has to exit after its stdin closes, in ms (the host's grace_ms)"),
    Flag.withDefault(1000),
    nonNegative
  ),
  call: Flag.String("call").pipe(
    Flag.withDescription(
      'the tool call in the sample tool_call and tool_result, as JSON {"tool": …, "args": {…}}: one your extension\'s match rules select'
    ),
    Flag.withSchema(SampleCallJson),
    Flag.optional
  ),
  json: Flag.Boolean("json").pipe(
    Flag.withDescription("print one JSON report instead of text"),
    Flag.withDefault(false)
  ),
  command: Argument.String("command").pipe(Argument.withDescription("the extension's command (after --)")),
  args: Argument.String("args").pipe(Argument.withDescription("its arguments"), Argument.variadic())
}

/** `abhed-ext check [--timeout-ms N] [--json] -- COMMAND [ARGS...]`: conformance check of one extension. */
export const check = Command.make(
  "check",
  flags,
  lazyHandler(() => import("./CheckMain.ts").then((m) => m.checkMain))
).pipe(
  Command.withShortDescription("Conformance check of one extension"),
  Command.withDescription(
    "Conformance check of one extension: starts it, sends every event with sample payloads, a request with " +
      "unicode and newlines inside strings, an unknown event and a burst of 100 pipelined requests, and checks " +
      "one valid reply per request, replies within the timeout, nothing unsolicited, no stdout noise and a clean " +
      "exit when stdin closes. Prints one PASS/FAIL line per check with latency (p50/max). " +
      "Exit codes: 0 every check passed, 1 a check failed, 64 bad usage."
  ),
  Command.withExamples([
    { command: "abhed-ext check -- bash docs/examples/block-secrets.sh", description: "check a bash extension" },
    { command: "abhed-ext check --timeout-ms 500 -- python3 my_ext.py", description: "with a tighter reply timeout" },
    {
      command:
        'abhed-ext check --call \'{"tool":"bash","args":{"command":"git push origin main"}}\' -- bash push-guard.sh',
      description: "send a call a `match: git push*` guard is actually given"
    },
    {
      command: "abhed-ext check --json -- node my-ext.ts | jq '.checks[] | select(.status==\"fail\")'",
      description: "machine-readable report"
    }
  ])
)
