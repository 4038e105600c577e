import { AuditLog, type AuditRecord } from "@abhed/host/AuditLog"
import { printable } from "@abhed/host/Printable"
import type { Config } from "@abhed/protocol"
import { Effect, Layer } from "effect"
import type { LineResult } from "./Session.ts"

/**
 * What a `run` saw, for `--summary` (a paragraph on stderr at the end) and `--strict` (exit 1 when no extension is
 * configured or one died). Fed by the output lines (calls by verdict) and by the audit records (per extension:
 * latency, deaths with their cause, an "allow" that counted for nothing), which `tee` takes on their way to the
 * `--audit` sink, if any.
 */

/** Events the host itself sends at startup and close: their latency includes the start, not a decision. */
const Lifecycle: ReadonlySet<string> = new Set(["session_start", "list_tools", "session_end"])

/** Exchange statuses that are no failure of the extension. */
const NotFailed: ReadonlySet<string> = new Set(["replied", "not_subscribed", "not_matched"])

interface PerExtension {
  readonly latencies: Array<number>
  /** The first failure: why it died. */
  death: string | undefined
  /** The requests it answered `failed` (it could not answer them, and lived on): its on_failure answered each. */
  couldNotAnswer: number
  /** tool_call replies that gave a reason but no block or ask: an allow, which an extension cannot give. */
  readonly ignoredAllows: Array<string>
  /**
   * The notes of `abhed-ext hook` on a hook run that failed in part (a value the peer does not know beside a rewrite,
   * which stands): not an allow, a guard that did not answer whole. A run that failed whole is answered `failed`.
   */
  readonly hookFailures: Array<string>
}

/** How `abhed-ext hook` begins the note of a run that failed in part (hook/HookOutcome.ts). */
const HookFailed = "hook failed: "

const fresh = (): PerExtension => ({
  latencies: [],
  death: undefined,
  couldNotAnswer: 0,
  ignoredAllows: [],
  hookFailures: []
})

export interface RunTally {
  /** Every extension configured during the run (with `--watch`, those a reload added too). */
  readonly extensions: Array<string>
  readonly verdicts: { allow: number; ask: number; deny: number }
  otherEvents: number
  badLines: number
  /** `invoke_tool`s refused for how their call was decided: what the agent tried to run after the verdict. */
  refusedInvokes: number
  readonly per: Map<string, PerExtension>
}

export const make = (config: Config): RunTally => {
  const names = config.extensions.map((x) => x.name)
  return {
    extensions: names,
    verdicts: { allow: 0, ask: 0, deny: 0 },
    otherEvents: 0,
    badLines: 0,
    refusedInvokes: 0,
    per: new Map(names.map((name) => [name, fresh()]))
  }
}

/** A reloaded config's extensions are tallied too; one already known keeps its tally (a restart is the same name). */
export const track = (tally: RunTally | undefined, config: Config): void => {
  if (tally === undefined) return
  for (const { name } of config.extensions) {
    if (tally.per.has(name)) continue
    tally.extensions.push(name)
    tally.per.set(name, fresh())
  }
}

/** Counts an output line (nothing when there is no tally: neither flag was given). */
export const addLine = (tally: RunTally | undefined, result: LineResult): Effect.Effect<void> =>
  tally === undefined
    ? Effect.void
    : Effect.sync(() => {
        const output = result.output
        if (result.refused === true) tally.refusedInvokes++
        else if ("error" in output) tally.badLines++
        else if (output.event === "tool_call") tally.verdicts[output.decision]++
        else tally.otherEvents++
      })

const isObject = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === "object" && u !== null

export const addRecord = (tally: RunTally, record: AuditRecord): void => {
  for (const round of record.rounds) {
    for (const x of round.exchanges) {
      const per = tally.per.get(x.extension)
      if (per === undefined) continue
      // A reply that says it could not answer: no death (the extension lives on), but no answer either.
      if (x.status === "failed") {
        per.couldNotAnswer++
        continue
      }
      if (!NotFailed.has(x.status)) {
        // With the line of its stderr that says why, as the host's warning has it (the operator's, never the model's).
        per.death ??= `${x.error ?? x.status}${typeof x.stderr === "string" ? `: ${x.stderr}` : ""}`
        continue
      }
      if (x.status !== "replied") continue
      if (!Lifecycle.has(record.event)) per.latencies.push(x.latency_ms)
      const reply = x.reply
      if (
        record.event === "tool_call" &&
        isObject(reply) &&
        typeof reply["reason"] === "string" &&
        reply["reason"] !== "" &&
        reply["block"] !== true &&
        reply["ask"] !== true
      )
        (reply["reason"].startsWith(HookFailed) ? per.hookFailures : per.ignoredAllows).push(reply["reason"])
    }
  }
}

/**
 * An AuditLog over the one in context: every record is tallied, then handed on. It records even when the sink
 * beneath keeps nothing (`AuditLog.layerNone`): the tally needs the records, and costs this only when asked for.
 * Without a tally, the sink as it is.
 */
export const tee = (tally: RunTally | undefined): Layer.Layer<AuditLog, never, AuditLog> =>
  Layer.effect(
    AuditLog,
    Effect.map(AuditLog, (sink) =>
      tally === undefined
        ? sink
        : AuditLog.of({
            record: (r) =>
              Effect.andThen(
                Effect.sync(() => addRecord(tally, r)),
                sink.record(r)
              ),
            entries: sink.entries
          })
    )
  )

/** The q-quantile of the sorted sample (nearest rank). */
const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0

const ms = (n: number): string => `${n < 10 ? Math.round(n * 10) / 10 : Math.round(n)} ms`

/** `--summary`: a few lines for people, on stderr. */
export const render = (tally: RunTally): string => {
  const v = tally.verdicts
  const calls = v.allow + v.ask + v.deny
  const lines = [
    `abhed-ext run: ${calls} tool call(s): ${v.deny} denied, ${v.ask} asked, ${v.allow} allowed; ` +
      `${tally.otherEvents} other event(s); ${tally.badLines} bad line(s)` +
      (tally.refusedInvokes > 0
        ? `; ${tally.refusedInvokes} invoke(s) refused (their call was denied, or decided with other args)`
        : "")
  ]
  if (tally.extensions.length === 0) lines.push("  no extension configured: the policy alone decided")
  const width = Math.max(...tally.extensions.map((name) => name.length))
  for (const name of tally.extensions) {
    const per = tally.per.get(name)
    if (per === undefined) continue
    const sorted = [...per.latencies].sort((a, b) => a - b)
    const latency =
      sorted.length === 0
        ? "no replies"
        : `${sorted.length} repl${sorted.length === 1 ? "y" : "ies"}, p50 ${ms(quantile(sorted, 0.5))}, p99 ${ms(quantile(sorted, 0.99))}`
    const unanswered =
      per.couldNotAnswer === 0 ? "" : `; could not answer ${per.couldNotAnswer} request(s) (its on_failure answered)`
    lines.push(
      `  ${name.padEnd(width)}  ${per.death === undefined ? "live" : `DEAD: ${per.death}`}; ${latency}${unanswered}`
    )
    if (per.ignoredAllows.length > 0) {
      lines.push(
        `  ${" ".repeat(width)}  ${per.ignoredAllows.length} allow(s) ignored (an extension may veto, never permit), ` +
          // The extension's own text: C1 controls and bidirectional overrides survive JSON, not `printable`.
          `e.g. ${printable(JSON.stringify(per.ignoredAllows[0]))}`
      )
    }
    if (per.hookFailures.length > 0) {
      lines.push(
        `  ${" ".repeat(width)}  ${per.hookFailures.length} hook run(s) failed in part, the rest of the answer standing ` +
          `(--fail-closed blocks instead), e.g. ${JSON.stringify(per.hookFailures[0])}`
      )
    }
  }
  return lines.join("\n")
}

/** Why `--strict` fails the run, or undefined. */
export const strictProblem = (tally: RunTally): string | undefined => {
  if (tally.extensions.length === 0) return "no extension is configured"
  // A guard that could not answer is no guard for those requests: as much a broken setup as a death.
  const dead = tally.extensions.flatMap((name) => {
    const per = tally.per.get(name)
    if (per === undefined) return []
    return [
      ...(per.death === undefined ? [] : [`${name} died (${per.death})`]),
      ...(per.couldNotAnswer === 0 ? [] : [`${name} could not answer ${per.couldNotAnswer} request(s)`])
    ]
  })
  return dead.length === 0 ? undefined : dead.join("; ")
}
