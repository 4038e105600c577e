import { printable } from "@abhed/host/Printable"
import { Console, Effect, Option } from "effect"
import { Command } from "effect/cli"
import { CheckFailed } from "../CliError.ts"
import { evaluate, failedChecks } from "./CheckResult.ts"
import { commandLine, renderJson, renderText } from "./CheckReport.ts"
import { observe } from "./CheckRunner.ts"
import { styleFor } from "../Style.ts"
import { failUsage } from "../Usage.ts"
import type { flags } from "./CheckCommand.ts"

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

/** What `abhed-ext check` does once its flags are parsed (CheckCommand.ts). */
export const checkMain = Effect.fn("check")(function* ({
  args,
  call,
  command,
  graceMs,
  json,
  quietMs,
  startupTimeoutMs,
  timeoutMs
}: Command.Command.Config.Infer<typeof flags>) {
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
