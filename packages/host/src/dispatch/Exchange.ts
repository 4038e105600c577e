import { type DecodedReply, type EventName, FailedTextMax, type ReplyOf } from "@abhed/protocol"
import { Clock, Effect, Metric } from "effect"
import type { AuditExchange, ExchangeStatus } from "../AuditLog.ts"
import type { EncodedRequest, Extension } from "../Extension.ts"
import {
  describeDeathCause,
  describeDeathCauseWithStderr,
  deathCauseOf,
  type ExtensionError
} from "../ExtensionError.ts"
import { HostMetrics } from "../HostMetrics.ts"
import { printable } from "../Printable.ts"
import { underDispatchSpan } from "../TelemetryParent.ts"

/**
 * One extension, one request (docs/design.md#failures): what came back, or how it failed, with its latency and
 * its audit entry. A failure is reported as a death once per extension, whoever sees it first.
 */
export interface Exchange<E extends EventName> {
  readonly extension: Extension
  readonly status: ExchangeStatus
  readonly reply: ReplyOf<E> | undefined
  /** Known reply fields that belong to other events (ignored). */
  readonly ignored: ReadonlyArray<string>
  readonly latency_ms: number
  /** Why it failed (the audit's `error`), when it did. */
  readonly error: string | undefined
  /** "extension X unavailable: cause", for on_failure. */
  readonly failure: string | undefined
  /** The line of a dead extension's stderr that says why (the audit's `stderr`), for its operator only. */
  readonly stderr?: string | undefined
  /** A `failed` reply's words, printable and bounded (the audit's `failed`), when it gave any: its operator's only. */
  readonly failed?: string | undefined
}

/** The exchange's audit entry: built only when the audit sink records (`AuditLog.enabled`). */
export const auditOf = (x: Exchange<EventName>): AuditExchange =>
  x.error !== undefined
    ? x.stderr !== undefined
      ? { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, error: x.error, stderr: x.stderr }
      : x.failed !== undefined || x.ignored.length > 0
        ? couldNotAnswerEntry(x, x.error)
        : { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, error: x.error }
    : x.ignored.length > 0
      ? { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, reply: x.reply, ignored: x.ignored }
      : { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, reply: x.reply }

/** A `failed` reply's entry: its words when it gave any, and its other fields, ignored, said (a block beside it is none). */
const couldNotAnswerEntry = (x: Exchange<EventName>, error: string): AuditExchange => ({
  extension: x.extension.name,
  status: x.status,
  latency_ms: x.latency_ms,
  error,
  ...(x.failed === undefined ? {} : { failed: x.failed }),
  ...(x.ignored.length === 0 ? {} : { ignored: x.ignored })
})

export const statusOf = (error: ExtensionError): ExchangeStatus => {
  switch (error._tag) {
    case "ExtensionTimeout":
      return "timed_out"
    case "ExtensionExited":
      return "exited"
    case "MalformedReply":
      return "malformed"
    case "UnsolicitedOutput":
      return "unsolicited"
    case "ReplyTooLong":
      return "too_long"
    case "SpawnFailed":
    case "ExtensionDead":
      return "dead"
  }
}

export const causeText = (error: ExtensionError): string =>
  error._tag === "ExtensionDead" ? error.cause : describeDeathCause(deathCauseOf(error))

/**
 * Counts a death once per extension, whoever sees it first: the request it failed on, or a later request that
 * found it dead (a spawn failure, or an exit or stray output between requests, is seen by no request).
 */
export const reportDeath = (reported: Set<string>, extension: Extension, error: ExtensionError) =>
  Effect.suspend(() => {
    if (reported.has(extension.name)) return Effect.void
    reported.add(extension.name)
    return Effect.gen(function* () {
      const status = yield* extension.status
      const cause =
        status.state._tag === "dead"
          ? status.state.cause._tag
          : error._tag === "ExtensionDead"
            ? "unknown"
            : deathCauseOf(error)._tag
      yield* Metric.update(Metric.withAttributes(HostMetrics.deaths, { cause }), 1)
      // With the line of its stderr that says why: the operator's to read (never the model's).
      const text = status.state._tag === "dead" ? describeDeathCauseWithStderr(status.state.cause) : causeText(error)
      // In the dispatch's span, for a logger that links a record to it (`underDispatchSpan`).
      yield* underDispatchSpan(Effect.logWarning(`extension ${extension.name} is dead: ${text}`))
    })
  })

export const replied = <E extends EventName>(
  extension: Extension,
  { failed, ignored, reply }: DecodedReply<E>,
  latency_ms: number
): Exchange<E> =>
  failed === undefined
    ? { extension, status: "replied", reply, ignored, latency_ms, error: undefined, failure: undefined }
    : couldNotAnswer(extension, failedWords(failed), ignored, latency_ms)

/**
 * `replied`, and a reply that says it failed said where a death is (the operator's log), each time: a guard that
 * cannot answer is one to look at.
 */
export const repliedSaid = <E extends EventName>(
  extension: Extension,
  event: EventName,
  decoded: DecodedReply<E>,
  latency_ms: number
): Effect.Effect<Exchange<E>> => {
  if (decoded.failed === undefined) return Effect.succeed(replied(extension, decoded, latency_ms))
  // Made printable and cut once, for the reason, the log line and the audit.
  const words = failedWords(decoded.failed)
  return Effect.as(
    underDispatchSpan(
      Effect.logWarning(`extension ${extension.name} could not answer a ${event} request: ${words ?? NoReason}`)
    ),
    couldNotAnswer<E>(extension, words, decoded.ignored, latency_ms)
  )
}

/**
 * A `failed` reply's text as the host repeats it: one printable line, bounded. Only its head is made printable (one
 * char more than is shown, to know it is longer): escaping all of a reply of megabytes of bidirectional overrides
 * took seconds of CPU, twice a failure. The cut never splits a surrogate pair (a lone half is no text).
 */
export const failedText = (text: string): string => failedWords(text) ?? NoReason

const NoReason = "no reason given"

/** `failedText`, but nothing for a blank text: the extension's own words, when it gave any (the audit's `failed`). */
export const failedWords = (text: string): string | undefined => {
  const line = printable(text.trim().slice(0, FailedTextMax + 1))
  if (line === "") return undefined
  if (line.length <= FailedTextMax) return line
  const cut = line.slice(0, FailedTextMax)
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`
}

/**
 * A reply that says the extension could not answer this request (its `failed`): a failure of this request alone,
 * under the extension's `on_failure` (docs/failures.md), with no death: the extension answers the next one. Its text
 * is the extension's word, shown as a reason is (never the host's own `error`, which says the failure by its shape),
 * and kept in the audit as the exchange's `failed` (content: it may quote what the extension read).
 */
const couldNotAnswer = <E extends EventName>(
  extension: Extension,
  words: string | undefined,
  ignored: ReadonlyArray<string>,
  latency_ms: number
): Exchange<E> => ({
  extension,
  status: "failed",
  reply: undefined,
  ignored,
  latency_ms,
  error: "failed (the extension could not answer)",
  failure: `extension ${extension.name} could not answer: ${words ?? NoReason}`,
  failed: words
})

export const failed = <E extends EventName>(
  extension: Extension,
  error: ExtensionError,
  latency_ms: number,
  reported: Set<string>
): Effect.Effect<Exchange<E>> => {
  const cause = causeText(error)
  return Effect.as(reportDeath(reported, extension, error), {
    extension,
    status: statusOf(error),
    reply: undefined,
    ignored: [],
    latency_ms,
    error: cause,
    failure: `extension ${extension.name} unavailable: ${cause}`,
    stderr: error._tag === "ExtensionExited" || error._tag === "ExtensionDead" ? error.stderr : undefined
  })
}

/** On the hot path (once per extension per round): no generator, one clock for both readings. */
export const exchange = <E extends EventName>(
  extension: Extension,
  request: EncodedRequest<E>,
  reported: Set<string>
) =>
  Clock.clockWith((clock) => {
    const start = clock.currentTimeMillisUnsafe()
    return Effect.matchEffect(extension.send(request), {
      onSuccess: (decoded): Effect.Effect<Exchange<E>> =>
        repliedSaid(extension, request.event, decoded, clock.currentTimeMillisUnsafe() - start),
      onFailure: (error): Effect.Effect<Exchange<E>> =>
        failed(extension, error, clock.currentTimeMillisUnsafe() - start, reported)
    })
  })
