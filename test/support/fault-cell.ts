import {
  type Config,
  Defaults,
  type EventName,
  extensionConfig,
  type ExtensionConfig,
  type JsonObject,
  type PolicyLevel
} from "@abhed/protocol"
import { AuditLog, type AuditRecord, auditView, ExtensionHost, type ExtensionStatus } from "@abhed/host"
import { Duration, Effect, Fiber, Option, References } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { isDeepStrictEqual } from "node:util"
import { exists, fixturesDir, liveGroupMembers, Patient } from "./extension-helpers.ts"
import {
  type Fault,
  type ModelExtension,
  normalizeContent,
  normalizeReason,
  type Outcome,
  type ReplyIds,
  runModel,
  type Step
} from "./fault-model.ts"

/**
 * Runs a session against the real host over real ext-fault.sh processes and checks it against the reference model
 * (test/support/fault-model.ts): the outcomes equal the model's, the audit names each death by its cause and holds no
 * content, and no process is left. Shared by the fault matrix and the model's property test.
 */

export const faultFixture = NodePath.join(fixturesDir, "faults", "ext-fault.sh")

/** A marker every misbehaviour writes into its bad output: the audit (as the JSONL sink keeps it) must never hold it. */
export const Secret = "SECRET-7f3a"

/** What ext-fault.sh is told. */
export interface Plan {
  readonly name: string
  readonly fault: Fault | "raw"
  readonly at: EventName
  /** Healthy replies other than the default ones (without the id, which is always echoed). */
  readonly replies?: Partial<Record<EventName, JsonObject>>
  /** Seconds before each reply of an event. */
  readonly delays?: Partial<Record<EventName, number>>
  readonly slowSeconds?: number
  readonly helperFile?: string
  /** Fault "raw": the reply line's bytes ("@ID@" becomes the request's id). */
  readonly raw?: Uint8Array
}

export const faultConfig = (plan: Plan, overrides: Partial<ExtensionConfig>): ExtensionConfig => {
  const env: Record<string, string> = { EXT_NAME: plan.name, SECRET: Secret }
  for (const [event, reply] of Object.entries(plan.replies ?? {}))
    env[`REPLY_${event}`] = JSON.stringify(reply).slice(1, -1)
  for (const [event, seconds] of Object.entries(plan.delays ?? {})) env[`DELAY_${event}`] = seconds.toFixed(3)
  if (plan.slowSeconds !== undefined) env["SLOW_S"] = String(plan.slowSeconds)
  if (plan.helperFile !== undefined) env["HELPER_FILE"] = plan.helperFile
  if (plan.raw !== undefined) {
    const file = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-raw-")), "reply")
    NodeFs.writeFileSync(file, Buffer.concat([plan.raw, Buffer.from("\n")]))
    env["RAW_FILE"] = file
  }
  return extensionConfig({
    name: plan.name,
    command: "bash",
    args: [faultFixture, plan.fault, plan.at],
    ...Patient,
    grace_ms: 300,
    env,
    ...overrides
  })
}

export const hostConfig = (extensions: ReadonlyArray<ExtensionConfig>, policy: PolicyLevel = "allow"): Config => ({
  extensions,
  policy: { ...Defaults.policy, default: policy },
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: []
})

/** The longest reply line the cells allow (the oversized fault writes more). */
export const CellMaxLineBytes = 64 * 1024

export interface SessionRun {
  readonly outcomes: ReadonlyArray<Outcome>
  readonly audit: ReadonlyArray<AuditRecord>
  readonly status: ReadonlyArray<ExtensionStatus>
  /** From the first dispatch to the end of the host's close. */
  readonly millis: number
  /** Processes (or groups) left behind, described. */
  readonly leftovers: ReadonlyArray<string>
}

const hostOutcome = (h: ExtensionHost["Service"], step: Step): Effect.Effect<Outcome> => {
  switch (step.event) {
    case "tool_call":
      return Effect.map(h.toolCall({ tool: step.tool, args: step.args }), (o) => ({
        event: "tool_call" as const,
        decision: o.decision,
        reasons: o.reasons.map(normalizeReason),
        args: o.args,
        rounds: o.rounds
      }))
    case "tool_result":
      return Effect.map(
        h.toolResult({ tool: "bash", args: { command: "ls" }, content: step.content, is_error: step.is_error }),
        (o) => ({ event: "tool_result" as const, content: normalizeContent(o.content), is_error: o.is_error })
      )
    case "context":
      return Effect.map(h.context(step.messages), (o) => ({
        event: "context" as const,
        keep: o.keep,
        withheld: o.withheld.map((w) => w.extension).sort()
      }))
    case "before_agent_start":
      return Effect.map(h.beforeAgentStart(step.system), (o) => ({
        event: "before_agent_start" as const,
        system: o.system
      }))
    case "before_compact":
      return Effect.map(h.beforeCompact(step.messages), (o) => ({
        event: "before_compact" as const,
        cancel: o.cancel,
        summary: o.summary
      }))
    case "invoke_tool":
      return Effect.map(Effect.result(h.invokeTool({ tool: step.tool, args: {} })), (r) =>
        r._tag === "Success"
          ? { event: "invoke_tool" as const, result: r.success.result, is_error: r.success.is_error }
          : { event: "invoke_tool" as const, error: r.failure._tag }
      )
  }
}

/** No process at all in group `pgid` (zombies included): the common case, without scanning /proc. */
const groupGone = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return false
  } catch {
    return true
  }
}

/**
 * Runs `steps` (in order) on a host over `config`, closes it, and looks for anything left of its processes. A session
 * still running after `deadlineMillis` is interrupted (its host closed): a hung host fails its cell, not the suite.
 */
export const runSession = (
  config: Config,
  steps: ReadonlyArray<Step>,
  deadlineMillis: number
): Effect.Effect<SessionRun> =>
  Effect.gen(function* () {
    const started = Date.now()
    const session = Effect.gen(function* () {
      const h = yield* ExtensionHost
      const outcomes: Array<Outcome> = []
      for (const step of steps) outcomes.push(yield* hostOutcome(h, step))
      return { outcomes, status: yield* h.status, interrupted: false }
    }).pipe(
      Effect.provide(
        ExtensionHost.layer(config, { sessionId: "s-fault", baseDir: fixturesDir, maxLineBytes: CellMaxLineBytes })
      )
    )
    // Detached and joined with a deadline: a host that hangs even its close cannot hang the suite (its interruption
    // goes on in the background).
    const fiber = yield* Effect.forkDetach(session)
    const joined = yield* Effect.timeoutOption(Fiber.join(fiber), Duration.millis(deadlineMillis))
    if (Option.isNone(joined)) yield* Effect.forkDetach(Fiber.interrupt(fiber))
    const inner = Option.getOrElse(joined, () => ({
      outcomes: [],
      status: [] as ReadonlyArray<ExtensionStatus>,
      interrupted: true
    }))
    const millis = Date.now() - started
    const audit = yield* AuditLog.use((a) => a.entries)
    const leftovers: Array<string> = []
    for (const s of inner.status) {
      if (s.pid === undefined) continue
      const group = groupGone(s.pid) ? [] : liveGroupMembers(s.pid)
      if (group.length > 0) leftovers.push(`${s.name}: group ${s.pid} still has ${group.join(", ")}`)
      if (exists(s.pid)) leftovers.push(`${s.name}: pid ${s.pid} not reaped`)
    }
    if (inner.interrupted) leftovers.push(`the session did not end within ${deadlineMillis} ms: interrupted`)
    return { outcomes: inner.outcomes, audit, status: inner.status, millis, leftovers }
  }).pipe(Effect.provide(AuditLog.layerMemory), Effect.provideService(References.MinimumLogLevel, "None"))

/** The standard steps of a cell: every event the agent calls, each once. */
export const standardSteps = (owner: string): ReadonlyArray<Step> => [
  { event: "tool_call", tool: "bash", args: { command: "ls" } },
  { event: "tool_result", content: `output ${Secret}`, is_error: false },
  {
    event: "context",
    messages: [
      { role: "user", content: "a" },
      { role: "tool", content: Secret },
      { role: "user", content: "b" }
    ]
  },
  { event: "before_agent_start", system: "You are Abhed." },
  { event: "before_compact", messages: [{ role: "user", content: "history" }] },
  { event: "invoke_tool", tool: `tool_${owner}` }
]

/** Every way the run differs from the model: empty when the host kept every rule. */
export const compareWithModel = (
  extensions: ReadonlyArray<ModelExtension>,
  steps: ReadonlyArray<Step>,
  run: SessionRun,
  options: { readonly policy?: PolicyLevel; readonly maxMillis: number; readonly secret?: string }
): ReadonlyArray<string> => {
  const model = runModel(extensions, steps, options.policy ?? "allow")
  const problems: Array<string> = []
  steps.forEach((step, i) => {
    const expected = model.outcomes[i]
    const actual = run.outcomes[i]
    if (!isDeepStrictEqual(actual, expected)) {
      problems.push(`${step.event}: host ${JSON.stringify(actual)}, model ${JSON.stringify(expected)}`)
    }
  })
  const exchanges = run.audit.flatMap((r) =>
    r.rounds.flatMap((round) => round.exchanges.map((x) => ({ record: r, x })))
  )
  for (const ext of extensions) {
    const own = exchanges.filter((e) => e.x.extension === ext.name)
    const errors = own.filter((e) => e.x.error !== undefined)
    const death = model.deaths[ext.name]
    const state = run.status.find((s) => s.name === ext.name)?.state
    if (death === undefined) {
      if (errors.length > 0)
        problems.push(`${ext.name}: should live, audit says ${errors[0]?.x.status}: ${errors[0]?.x.error}`)
      if (state?._tag === "dead") problems.push(`${ext.name}: should live, status says dead: ${state.cause._tag}`)
      continue
    }
    const first = errors[0]
    if (first === undefined) {
      if (death.events.length > 0) {
        problems.push(
          `${ext.name}: should die at ${death.events[0]} (${death.causes.join(" | ")}), the audit names no failure`
        )
      }
    } else if (!death.events.includes(first.record.event as EventName)) {
      problems.push(
        `${ext.name}: died at ${first.record.event}, the model at ${death.events.join(" or ") || "no dispatch"}`
      )
    }
    for (const e of errors) {
      const error = e.x.error ?? ""
      if (!death.causes.some((c) => error.startsWith(c))) {
        problems.push(
          `${ext.name}: audit cause "${error.slice(0, 120)}" at ${e.record.event}, expected ${death.causes.join(" | ")}`
        )
        break
      }
    }
    // The status is read before the close: a death at session_end is seen in the audit only.
    if (death.events.length > 0 && death.events.every((e) => e === "session_end")) continue
    if (state?._tag !== "dead") problems.push(`${ext.name}: status says ${state?._tag}, expected dead`)
    else if (!death.causes.includes(state.cause._tag as never))
      problems.push(`${ext.name}: status cause ${state.cause._tag}`)
  }
  const digest = JSON.stringify(run.audit.map((r) => auditView(r, "digest")))
  const secret = options.secret ?? Secret
  if (digest.includes(secret)) {
    const at = digest.indexOf(secret)
    problems.push(`the audit holds content: …${digest.slice(Math.max(0, at - 100), at + secret.length + 20)}…`)
  }
  if (run.millis > options.maxMillis) problems.push(`took ${run.millis} ms, bound ${options.maxMillis} ms`)
  problems.push(...run.leftovers)
  return problems
}

/** Reads the setsid helper's pid and ends it (the test started it; it is out of the host's reach by design). */
export const endHelper = (file: string | undefined): void => {
  if (file === undefined || !NodeFs.existsSync(file)) return
  const pid = Number(NodeFs.readFileSync(file, "utf8"))
  if (Number.isInteger(pid) && pid > 1) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
}

export type { ReplyIds }
