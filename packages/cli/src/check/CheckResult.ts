import { decodeReply, isJsonObject, isToolName, previewJson, replyIdOf } from "@abhed/protocol"
import { Result } from "effect"
import { type PlannedRequest, requestId } from "./CheckPlan.ts"

/**
 * From what was observed while talking to the extension to one verdict per check (pure).
 * The runner (`CheckRunner.ts`) only observes; every judgement is made here.
 */

export interface Exchange {
  readonly planned: PlannedRequest
  readonly outcome:
    | { readonly _tag: "replied"; readonly text: string; readonly latency_ms: number }
    | { readonly _tag: "timed_out"; readonly waited_ms: number }
    | { readonly _tag: "eof" } // stdout closed before a reply
    | { readonly _tag: "skipped"; readonly why: string }
}

/** A stdout line that was not the reply to a request in flight. */
export interface StrayLine {
  /** Where it came: `before the first request`, `after the reply to tool_call`, `after stdin closed`. */
  readonly where: string
  readonly text: string
  /** JSON (an unsolicited reply) or not (noise). */
  readonly json: boolean
}

export type ExitObservation =
  | { readonly _tag: "exited"; readonly code: number; readonly after_ms: number }
  | { readonly _tag: "killed"; readonly detail: string }
  | { readonly _tag: "still_running"; readonly waited_ms: number }
  | { readonly _tag: "not_run"; readonly why: string }

export interface Observation {
  readonly spawn: { readonly ok: true } | { readonly ok: false; readonly detail: string }
  readonly sequence: ReadonlyArray<Exchange>
  readonly burst: ReadonlyArray<Exchange>
  readonly stray: ReadonlyArray<StrayLine>
  /** Unsolicited lines past the ones kept in `stray`: a flood, counted, not kept. */
  readonly stray_dropped?: number | undefined
  readonly exit: ExitObservation
  /** The end of the extension's stderr, for the report. */
  readonly stderr_tail: string
}

export type CheckId =
  | "starts"
  | "quiet_before_first_request"
  | "valid_replies"
  | "one_reply_per_request"
  | "echoes_ids"
  | "replies_within_timeout"
  | "no_stdout_noise"
  | "unknown_event"
  | "unicode"
  | "pipelined_burst"
  | "clean_exit"

export const CheckTitles: { readonly [K in CheckId]: string } = {
  starts: "starts",
  quiet_before_first_request: "nothing on stdout before the first request",
  valid_replies: "every reply is valid for its event",
  one_reply_per_request: "one reply per request, nothing unsolicited",
  echoes_ids: "no reply carries another request's id",
  replies_within_timeout: "replies within the timeout",
  no_stdout_noise: "no stdout noise (every line is JSON)",
  unknown_event: "answers an unknown event",
  unicode: "unicode and newlines inside strings",
  pipelined_burst: "pipelined burst: one valid reply per request",
  clean_exit: "exits cleanly when stdin closes"
}

export interface Latency {
  readonly p50_ms: number
  readonly max_ms: number
}

export interface CheckResult {
  readonly id: CheckId
  readonly title: string
  readonly status: "pass" | "fail" | "skip"
  /** Why it failed or was skipped; empty when it passed. */
  readonly details: ReadonlyArray<string>
  readonly latency?: Latency
}

const preview = (text: string): string => previewJson(text, 100)

/** The problem with one reply, or undefined when it is valid for its request. */
export const replyProblem = (planned: PlannedRequest, text: string): string | undefined => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return `reply is not JSON: ${preview(text)}`
  }
  if (planned.event === undefined) {
    return isJsonObject(json) ? undefined : `reply is not a JSON object: ${preview(text)}`
  }
  const decoded = decodeReply(planned.event, json)
  if (Result.isFailure(decoded)) return `${decoded.failure.message} (reply ${preview(text)})`
  // A valid request it could not answer: the host would apply its on_failure (docs/failures.md).
  if (decoded.success.failed !== undefined)
    return `could not answer (its reply says "failed": ${preview(decoded.success.failed)}): the host applies its on_failure`
  // A tool name the host would reject (docs/design.md#combination): the reply is valid, but that tool would never be
  // offered.
  const tools =
    planned.event === "list_tools" && isJsonObject(json) && Array.isArray(json["tools"]) ? json["tools"] : []
  const bad = tools.findIndex((t) => isJsonObject(t) && typeof t["name"] === "string" && !isToolName(t["name"]))
  if (bad === -1) return undefined
  const name = (tools[bad] as { readonly name: string }).name
  return `tools[${bad}].name: ${escapeNonAscii(JSON.stringify(name))} is not a valid tool name (^[A-Za-z0-9_-]{1,64}$, not __proto__): the host rejects it`
}

/** Characters outside printable ASCII as \uXXXX: a look-alike name must show. */
const escapeNonAscii = (text: string): string =>
  text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** Nearest-rank percentile over sorted values. */
const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0

const round1 = (n: number) => Math.round(n * 10) / 10

export const latencyOf = (exchanges: ReadonlyArray<Exchange>): Latency | undefined => {
  const values = exchanges
    .flatMap((x) => (x.outcome._tag === "replied" ? [x.outcome.latency_ms] : []))
    .sort((a, b) => a - b)
  return values.length === 0
    ? undefined
    : { p50_ms: round1(percentile(values, 50)), max_ms: round1(values[values.length - 1] ?? 0) }
}

const result = (id: CheckId, details: ReadonlyArray<string>, latency?: Latency, skip?: string): CheckResult => {
  const base = { id, title: CheckTitles[id] }
  const withLatency = latency === undefined ? base : { ...base, latency }
  if (skip !== undefined) return { ...withLatency, status: "skip", details: [skip] }
  return { ...withLatency, status: details.length === 0 ? "pass" : "fail", details }
}

/** Did this exchange get exactly a valid reply in time? The reasons it did not. */
const exchangeProblems = (x: Exchange, timeoutName: string): ReadonlyArray<string> => {
  switch (x.outcome._tag) {
    case "replied": {
      const problem = replyProblem(x.planned, x.outcome.text)
      return problem === undefined ? [] : [`${x.planned.label}: ${problem}`]
    }
    case "timed_out":
      return [`${x.planned.label}: no reply within ${x.outcome.waited_ms} ms${timeoutName}`]
    case "eof":
      return [`${x.planned.label}: stdout closed before a reply (the extension exited?)`]
    case "skipped":
      return [`${x.planned.label}: skipped (${x.outcome.why})`]
  }
}

/**
 * Do replies echo `id` (docs/design.md#wire-protocol)? A reply with another request's id fails (the host would mark the
 * extension dead). Not echoing passes, with a note: the host accepts it unless `reply_ids` is "required", but then a
 * stray line that arrives in a later read cannot be told from a reply. With no JSON reply at all there is nothing to
 * judge: skipped, never passed.
 */
const idsResult = (answered: ReadonlyArray<Exchange>): CheckResult => {
  const wrong: Array<string> = []
  const missing: Array<string> = []
  let checked = 0
  for (const x of answered) {
    if (x.outcome._tag !== "replied") continue
    let json: unknown
    try {
      json = JSON.parse(x.outcome.text)
    } catch {
      continue // not JSON: valid_replies says so
    }
    checked++
    const id = replyIdOf(json)
    const expected = requestId(x.planned)
    if (id === undefined) missing.push(x.planned.label)
    else if (id !== expected) {
      wrong.push(
        `${x.planned.label}: reply carries id ${previewJson(id, 100)}, the request's is "${expected}" (the host would mark it dead)`
      )
    }
  }
  const base = { id: "echoes_ids" as const, title: CheckTitles.echoes_ids }
  if (checked === 0) return result("echoes_ids", [], undefined, "not checked: no request got a JSON reply")
  if (wrong.length > 0) return { ...base, status: "fail", details: wrong }
  if (missing.length === 0) {
    return {
      ...base,
      status: "pass",
      details: [
        'every reply echoes it: run it with "reply_ids": "required" (every stray line is then caught, and the host writes each request without first waiting a turn of its event loop: docs/protocol.md)'
      ]
    }
  }
  return {
    ...base,
    status: "pass",
    details: [
      missing.length === checked
        ? "no reply echoes the request's id"
        : `${missing.length} of ${checked} replies do not echo the request's id (${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ", …" : ""})`,
      'accepted, but a stray line arriving in a later read cannot then be caught, and a host with "reply_ids": "required" would reject such replies: echo "id" (docs/extensions.md)'
    ]
  }
}

/** Every check, in report order. */
export const evaluate = (o: Observation): ReadonlyArray<CheckResult> => {
  if (!o.spawn.ok) {
    const detail = o.spawn.detail
    const why = "the extension did not start"
    // Object.keys of a record typed by CheckId yields exactly the CheckIds.
    return (Object.keys(CheckTitles) as ReadonlyArray<CheckId>).map((id) =>
      id === "starts" ? result("starts", [detail]) : result(id, [], undefined, why)
    )
  }
  const all = [...o.sequence, ...o.burst]
  const answered = all.filter((x) => x.outcome._tag === "replied")
  const invalid = answered.flatMap((x) => exchangeProblems(x, ""))
  const unanswered = all.filter((x) => x.outcome._tag === "timed_out" || x.outcome._tag === "eof")
  const skipped = all.filter((x) => x.outcome._tag === "skipped")
  const stray = o.stray.filter((s) => s.json)
  const noise = o.stray.filter((s) => !s.json)
  const early = o.stray.filter((s) => s.where === BeforeFirstRequest)

  const pick = (label: string) => o.sequence.find((x) => x.planned.label === label)
  const single = (id: CheckId, label: string): CheckResult => {
    const x = pick(label)
    if (x === undefined) return result(id, [`${label}: not in the plan`])
    if (x.outcome._tag === "skipped") return result(id, [], undefined, `skipped: ${x.outcome.why}`)
    return result(id, exchangeProblems(x, ""), latencyOf([x]))
  }

  const burstProblems = o.burst.flatMap((x) => exchangeProblems(x, " (measured from the previous reply)"))
  const burstReplied = o.burst.filter((x) => x.outcome._tag === "replied").length

  return [
    result("starts", []),
    result(
      "quiet_before_first_request",
      early.map((s) => `wrote ${preview(s.text)} before any request`)
    ),
    result("valid_replies", invalid, latencyOf(o.sequence)),
    result("one_reply_per_request", [
      ...((o.stray_dropped ?? 0) > 0
        ? [
            `a flood on stdout: ${o.stray.length + (o.stray_dropped ?? 0)} lines no request asked for (the first ${o.stray.length} kept)`
          ]
        : []),
      ...stray.map((s) => `unsolicited line ${s.where}: ${preview(s.text)}`),
      ...unanswered.map((x) => `${x.planned.label}: no reply`)
    ]),
    idsResult(answered),
    result(
      "replies_within_timeout",
      [
        ...unanswered.flatMap((x) => exchangeProblems(x, "")),
        ...(skipped.length > 0 ? [`${skipped.length} later request(s) skipped after that`] : [])
      ],
      // Burst replies arrive in batches (many "0 ms" reads), so the one-at-a-time sequence is the honest measure.
      latencyOf(o.sequence)
    ),
    result(
      "no_stdout_noise",
      noise.map((s) => `non-JSON line ${s.where}: ${preview(s.text)}`)
    ),
    single("unknown_event", "unknown event"),
    single("unicode", "unicode"),
    o.burst.length === 0
      ? result("pipelined_burst", [], undefined, "not run")
      : result(
          "pipelined_burst",
          burstProblems.length === 0 ? [] : [`${burstReplied}/${o.burst.length} replies`, ...burstProblems.slice(0, 5)],
          latencyOf(o.burst)
        ),
    exitResult(o.exit)
  ]
}

const exitResult = (exit: ExitObservation): CheckResult => {
  switch (exit._tag) {
    case "exited":
      return result("clean_exit", exit.code === 0 ? [] : [`exited with code ${exit.code} after stdin closed`])
    case "killed":
      return result("clean_exit", [`died by ${exit.detail}`])
    case "still_running":
      return result("clean_exit", [`still running ${exit.waited_ms} ms after stdin closed (killed)`])
    case "not_run":
      return result("clean_exit", [], undefined, exit.why)
  }
}

export const BeforeFirstRequest = "before the first request"

export const failedChecks = (results: ReadonlyArray<CheckResult>): ReadonlyArray<CheckId> =>
  results.filter((r) => r.status === "fail").map((r) => r.id)
