import { printable } from "@abhed/host/Printable"
import { Console, Effect, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CheckFailed } from "../CliError.ts"
import { evaluate, failedChecks } from "./CheckResult.ts"
import { commandLine, renderJson, renderText } from "./CheckReport.ts"
import { observe } from "./CheckRunner.ts"
import { styleFor } from "../Style.ts"
import { nonNegative, positive } from "../DurationFlags.ts"
import { failUsage } from "../Usage.ts"

/** `--call`: a JSON object with a non-empty `tool` and an `args` object (default `{}`). */
const SampleCallJson = Schema.fromJsonString(
  Schema.Struct({
    tool: Schema.NonEmptyString,
    args: Schema.Record(Schema.String, Schema.Unknown).pipe(Schema.optionalKey)
  })
)

/**
 * What is wrong with the command after `--`, if anything: an empty or blank one names no program (spawn would
 * throw on "" and fail with a puzzling ENOENT on " "), as in a config (docs/design.md#configuration).
 */
const commandProblem = (command: string): string | undefined => {
  const fix = "give the program to run, e.g. abhed-ext check -- bash guard.sh"
  if (command === "") return `the command after -- is empty; ${fix}`
  if (command.trim() === "") return `the command after -- is blank (only whitespace); ${fix}`
  return undefined
}

/** A flag value or command `check` cannot use: exit 64, as for any usage error (Usage.ts). */
const usage = (problem: string) => failUsage(["abhed-ext", "check"], problem)

/** `abhed-ext check [--timeout-ms N] [--json] -- COMMAND [ARGS...]`: conformance check of one extension. */
export const check = Command.make(
  "check",
  {
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
  },
  Effect.fn("check")(function* ({ args, call, command, graceMs, json, quietMs, startupTimeoutMs, timeoutMs }) {
    const problem = commandProblem(command)
    if (problem !== undefined) return yield* usage(problem)
    const sample = Option.map(call, (c) => ({ tool: c.tool, args: c.args ?? {} }))
    const observation = yield* observe({
      command,
      args,
      timeoutMs,
      startupTimeoutMs,
      quietMs,
      graceMs,
      call: Option.getOrUndefined(sample)
    })
    const results = evaluate(observation)
    const target = commandLine([command, ...args])
    if (json) {
      yield* Console.log(renderJson([command, ...args], results, observation.stderr_tail))
    } else {
      const style = yield* Effect.sync(() => styleFor(process.stdout))
      yield* Console.log(renderText(target, results, observation.stderr_tail, style))
      // With --call, what the extension said to the call it was given: the point of choosing one.
      if (Option.isSome(sample)) {
        const said = observation.sequence.find((x) => x.planned.label === "tool_call")?.outcome
        yield* Console.log(
          `tool_call ${sample.value.tool} ${JSON.stringify(sample.value.args)} → ${said?._tag === "replied" ? printable(said.text) : "no reply"}`
        )
      }
    }
    const failed = failedChecks(results)
    if (failed.length > 0) return yield* new CheckFailed({ failed })
  })
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
