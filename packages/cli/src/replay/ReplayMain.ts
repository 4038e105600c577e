import { Console, Effect, Option, Result, Stream } from "effect"
import { Command } from "effect/cli"
import { ReplayFailed } from "../CliError.ts"
import { loadConfig, StdinConfig } from "../ConfigFile.ts"
import { inputLines } from "../Input.ts"
import { styleFor } from "../Style.ts"
import { failUsage } from "../Usage.ts"
import { failuresOf } from "./Actors.ts"
import { type Malformed, type ReadRecord, readRecord, sessionsOf } from "./AuditInput.ts"
import { compareCall, compareContext, compareResult } from "./ReplayCompare.ts"
import { startHost } from "./ReplayHost.ts"
import { planOf } from "./ReplayPlan.ts"
import { renderJson, renderText, type Replayed, type Skipped, summarize } from "./ReplayReport.ts"
import type { flags } from "./ReplayCommand.ts"

/** What `abhed-ext replay` does once its flags are parsed (ReplayCommand.ts). */
export const replayMain = Effect.fn("replay")(function* ({
  audits,
  config,
  failOn,
  json
}: Command.Command.Config.Infer<typeof flags>) {
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
          // An extension that failed now answered with its on_failure: said with the outcome, changed or not.
          const done = (comparison: Replayed["comparison"]) =>
            Effect.map(last, (after) => {
              replayed.push({
                where: record.where,
                session_id: session.sessionId,
                seq: record.seq,
                event: record.event,
                call_id: record.call_id,
                tool: record.tool,
                comparison,
                failed: failuresOf(after)
              })
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
              // A damaged record (an edit, a flipped byte): what it decided cannot be read, so a gate cannot vouch.
              if (comparison === undefined)
                malformed.push({
                  where: record.where,
                  problem:
                    "the recorded outcome is not a tool_call outcome (a decision allow, ask or deny, reasons, args)"
                })
              else yield* done(comparison)
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
              yield* done(compareResult(record, { content: plan.content, isError: plan.isError }, outcome, yield* last))
              break
            }
            case "Context": {
              const outcome = yield* host.context(plan.messages)
              yield* done(compareContext(record, plan.messages.length, outcome, yield* last))
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
    // A gate cannot vouch for decisions an extension did not make: its on_failure made them.
    s.unanswered > 0
      ? `${s.unanswered} event${s.unanswered === 1 ? " was" : "s were"} decided in part by on_failure (an extension did not answer)`
      : undefined,
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
