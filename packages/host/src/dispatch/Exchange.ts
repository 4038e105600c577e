import type { DecodedReply, EventName, ReplyOf } from "@abhed/protocol"
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
}

/** The exchange's audit entry: built only when the audit sink records (`AuditLog.enabled`). */
export const auditOf = (x: Exchange<EventName>): AuditExchange =>
  x.error !== undefined
    ? x.stderr !== undefined
      ? { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, error: x.error, stderr: x.stderr }
      : { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, error: x.error }
    : x.ignored.length > 0
      ? { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, reply: x.reply, ignored: x.ignored }
      : { extension: x.extension.name, status: x.status, latency_ms: x.latency_ms, reply: x.reply }

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
  { ignored, reply }: DecodedReply<E>,
  latency_ms: number
): Exchange<E> => ({ extension, status: "replied", reply, ignored, latency_ms, error: undefined, failure: undefined })

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
        Effect.succeed(replied(extension, decoded, clock.currentTimeMillisUnsafe() - start)),
      onFailure: (error): Effect.Effect<Exchange<E>> =>
        failed(extension, error, clock.currentTimeMillisUnsafe() - start, reported)
    })
  })
