import { Console, Effect, Option, Result, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { ReplayFailed } from "../CliError.ts"
import { loadConfig, StdinConfig } from "../ConfigFile.ts"
import { inputLines } from "../Input.ts"
import { styleFor } from "../Style.ts"
import { failUsage } from "../Usage.ts"
import { type Malformed, type ReadRecord, readRecord, sessionsOf } from "./AuditInput.ts"
import { compareCall, compareContext, compareResult } from "./ReplayCompare.ts"
import { startHost } from "./ReplayHost.ts"
import { planOf } from "./ReplayPlan.ts"
import { renderJson, renderText, type Replayed, type Skipped, summarize } from "./ReplayReport.ts"

/** `abhed-ext replay -c NEW.json AUDIT.jsonl… [--fail-on any|looser] [--json]`: docs/cli.md#abhed-ext-replay. */
export const replay = Command.make(
  "replay",
  {
    config: Flag.String("config").pipe(
      Flag.withAlias("c"),
      Flag.withDescription(
        "the abhed.json to re-decide the recorded events under (-: stdin, with the audits from files)"
      )
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
  },
  Effect.fn("replay")(function* ({ audits, config, failOn, json }) {
    if (config === StdinConfig && audits.includes("-")) {
      return yield* failUsage(
        ["abhed-ext", "replay"],
        "--config - reads the config from stdin, so the audits must come from files"
      )
    }
    const loaded = yield* loadConfig(config)
    const records: Array<ReadRecord> = []
    const malformed: Array<Malformed> = []
    for (const file of audits) {
      const lines = yield* Stream.runCollect(yield* inputLines(Option.some(file)))
      Array.from(lines).forEach((text, i) => {
        const read = readRecord(file, i + 1, text)
        if (read === undefined) return
        if (Result.isSuccess(read)) records.push(read.success)
        else malformed.push(read.failure)
      })
    }
    const replayed: Array<Replayed> = []
    const notReplayable: Array<Skipped> = []
    for (const session of sessionsOf(records)) {
      const planned = session.records.map((record) => ({ record, plan: planOf(record) }))
      // A session with nothing to replay never starts the extensions.
      if (
        !planned.some(({ plan }) => plan._tag === "ToolCall" || plan._tag === "ToolResult" || plan._tag === "Context")
      ) {
        for (const { plan, record } of planned) {
          if (plan._tag === "NotReplayable")
            notReplayable.push({
              where: record.where,
              event: record.event,
              call_id: record.call_id,
              reason: plan.reason
            })
        }
        continue
      }
      yield* Effect.scoped(
        Effect.gen(function* () {
          // The recorded session id, and the recorded call ids: extensions see the events as they first saw them.
          const { host, last } = yield* startHost(loaded, session.sessionId)
          for (const { plan, record } of planned) {
            const skip = (reason: string) =>
              notReplayable.push({ where: record.where, event: record.event, call_id: record.call_id, reason })
            const done = (comparison: Replayed["comparison"]) =>
              replayed.push({
                where: record.where,
                session_id: session.sessionId,
                seq: record.seq,
                event: record.event,
                call_id: record.call_id,
                tool: record.tool,
                comparison
              })
            switch (plan._tag) {
              case "HostOwn":
                break
              case "NotReplayable":
                skip(plan.reason)
                break
              case "ToolCall": {
                const outcome = yield* host.toolCall({ tool: plan.tool, args: plan.args, call_id: plan.callId })
                const comparison = compareCall(record, outcome)
                if (comparison === undefined) skip("the recorded outcome is not a tool_call outcome")
                else done(comparison)
                break
              }
              case "ToolResult": {
                const outcome = yield* host.toolResult({
                  tool: plan.tool,
                  args: plan.args,
                  content: plan.content,
                  is_error: plan.isError,
                  call_id: plan.callId
                })
                done(compareResult(record, { content: plan.content, isError: plan.isError }, outcome, yield* last))
                break
              }
              case "Context": {
                const outcome = yield* host.context(plan.messages)
                done(compareContext(record, plan.messages.length, outcome, yield* last))
                break
              }
            }
          }
        })
      )
    }
    const result = { config, replayed, notReplayable, malformed }
    yield* Console.log(json ? renderJson(result) : renderText(result, styleFor()))
    const s = summarize(result)
    if (s.replayed === 0 && s.malformed === 0) yield* Console.error("abhed-ext replay: warning: no event to replay")
    const problems = [
      s.malformed > 0 ? `${s.malformed} audit line${s.malformed === 1 ? "" : "s"} could not be read` : undefined,
      failOn === "looser"
        ? s.looser > 0
          ? `${s.looser} decision${s.looser === 1 ? "" : "s"} became looser`
          : undefined
        : s.stricter + s.looser + s.changed > 0
          ? `${s.stricter + s.looser + s.changed} decision${s.stricter + s.looser + s.changed === 1 ? "" : "s"} changed`
          : undefined
    ].filter((p) => p !== undefined)
    if (problems.length > 0) {
      const failed = new ReplayFailed({ problem: problems.join("; ") })
      yield* Console.error(failed.message)
      return yield* failed
    }
  })
).pipe(
  Command.withShortDescription("Re-decide recorded sessions under another config, and show what changes"),
  Command.withDescription(
    "Re-decide every tool_call of audit files (abhed-ext run --audit), and every tool_result and context whose " +
      "content the audit holds (--audit-content full), under a config's real extensions and policy. Extensions " +
      "receive the recorded events; no tool ever runs. Prints each changed decision (before, after, by which " +
      "extension), the events that cannot be replayed and why, and a summary. Exit codes: 0 nothing changed (with " +
      "--fail-on looser: nothing became looser), 1 a decision changed or an audit line is not a record, 2 invalid " +
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
