import { MalformedReply } from "@abhed/protocol"
import { Schema } from "effect"

/**
 * Why an exchange with an extension failed (docs/design.md#failures). Every one of these marks the extension dead for
 * good. `MalformedReply` is the protocol's own error (it names the field and what was expected).
 */
export class ExtensionTimeout extends Schema.TaggedError<ExtensionTimeout>()("ExtensionTimeout", {
  extension: Schema.String,
  timeout_ms: Schema.Number
}) {
  override get message() {
    return `${this.extension}: no reply within ${this.timeout_ms} ms`
  }
}

export class ExtensionExited extends Schema.TaggedError<ExtensionExited>()("ExtensionExited", {
  extension: Schema.String,
  code: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  /**
   * The line of its stderr that says why (StderrTail.errorLine: escaped, bounded), when it wrote one. The
   * extension's own words, for its operator: never in the notes the model reads (see `describeDeathCause`).
   */
  stderr: Schema.optionalKey(Schema.String)
}) {
  override get message() {
    return `${this.extension}: exited (${this.signal !== null ? `signal ${this.signal}` : `code ${this.code}`})`
  }
}

export class UnsolicitedOutput extends Schema.TaggedError<UnsolicitedOutput>()("UnsolicitedOutput", {
  extension: Schema.String,
  /**
   * What was out of step (docs/design.md#failures): the start of a line that no request in flight can own (none in
   * flight, or more lines in one read than requests in flight), or "reply to id X while Y was in flight".
   */
  line: Schema.String
}) {
  override get message() {
    return `${this.extension}: unsolicited output (a line no request in flight can own): ${this.line}`
  }
}

export class ReplyTooLong extends Schema.TaggedError<ReplyTooLong>()("ReplyTooLong", {
  extension: Schema.String,
  max_line_bytes: Schema.Number
}) {
  override get message() {
    return `${this.extension}: reply line longer than ${this.max_line_bytes} bytes`
  }
}

export class SpawnFailed extends Schema.TaggedError<SpawnFailed>()("SpawnFailed", {
  extension: Schema.String,
  command: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `${this.extension}: could not start ${this.command}: ${this.detail}`
  }
}

/** A request to an extension that died earlier: it is never written to again. */
export class ExtensionDead extends Schema.TaggedError<ExtensionDead>()("ExtensionDead", {
  extension: Schema.String,
  cause: Schema.String,
  /** The death's stderr line, as in `ExtensionExited` (not part of `cause`, which the model may read). */
  stderr: Schema.optionalKey(Schema.String)
}) {
  override get message() {
    return `${this.extension}: dead (${this.cause})`
  }
}

export { MalformedReply }

export type ExtensionError =
  | ExtensionTimeout
  | ExtensionExited
  | MalformedReply
  | UnsolicitedOutput
  | ReplyTooLong
  | SpawnFailed
  | ExtensionDead

/** The death causes of docs/design.md#failures, as written in status and audit records. */
export type DeathCause =
  | { readonly _tag: "spawn_failed"; readonly detail: string }
  | {
      readonly _tag: "exited"
      readonly code: number | null
      readonly signal: string | null
      /** The line of its stderr that says why, when it wrote one (StderrTail.errorLine). */
      readonly stderr?: string
    }
  | { readonly _tag: "timed_out"; readonly timeout_ms: number }
  | { readonly _tag: "malformed_reply"; readonly detail: string }
  | { readonly _tag: "unsolicited_output"; readonly detail: string }
  | { readonly _tag: "reply_too_long"; readonly max_line_bytes: number }

export const deathCauseOf = (error: Exclude<ExtensionError, ExtensionDead>): DeathCause => {
  switch (error._tag) {
    case "SpawnFailed":
      return { _tag: "spawn_failed", detail: error.message }
    case "ExtensionExited":
      return error.stderr === undefined
        ? { _tag: "exited", code: error.code, signal: error.signal }
        : { _tag: "exited", code: error.code, signal: error.signal, stderr: error.stderr }
    case "ExtensionTimeout":
      return { _tag: "timed_out", timeout_ms: error.timeout_ms }
    case "MalformedReply":
      return { _tag: "malformed_reply", detail: error.message }
    case "UnsolicitedOutput":
      return { _tag: "unsolicited_output", detail: error.line }
    case "ReplyTooLong":
      return { _tag: "reply_too_long", max_line_bytes: error.max_line_bytes }
  }
}

/**
 * One line for humans: `timed_out (5000 ms)`, `exited (code 1)`. Without the extension's stderr: this text also
 * reaches the notes the model reads (`on_failure`), and the audit's `error` whatever its content mode.
 */
export const describeDeathCause = (cause: DeathCause): string => {
  switch (cause._tag) {
    case "spawn_failed":
      return `spawn_failed: ${cause.detail}`
    case "exited":
      return cause.signal !== null ? `exited (signal ${cause.signal})` : `exited (code ${cause.code})`
    case "timed_out":
      return `timed_out (${cause.timeout_ms} ms)`
    case "malformed_reply":
      return `malformed_reply: ${cause.detail}`
    case "unsolicited_output":
      return `unsolicited_output: ${cause.detail}`
    case "reply_too_long":
      return `reply_too_long (over ${cause.max_line_bytes} bytes)`
  }
}

/** The death's stderr line (an exit's), if any. */
export const stderrOf = (cause: DeathCause): string | undefined => (cause._tag === "exited" ? cause.stderr : undefined)

/**
 * `describeDeathCause` for the operator (the host's warning, `check`): an exit with the line of its stderr that says
 * why (`exited (code 1): SyntaxError: Cannot use import statement outside a module`).
 */
export const describeDeathCauseWithStderr = (cause: DeathCause): string => {
  const stderr = stderrOf(cause)
  return stderr === undefined
    ? `${describeDeathCause(cause)}${stdoutHint(cause)}`
    : `${describeDeathCause(cause)}: ${stderr}`
}

/**
 * What to do about the commonest first mistakes, which the cause alone does not say: a line on stdout that is not
 * JSON is most often a debug print or a banner (the cause names its shape only: it may hold what the extension saw);
 * a reply that never comes, a reply left in the stdout buffer of a runtime that buffers a pipe (python, C).
 */
const stdoutHint = (cause: DeathCause): string =>
  (cause._tag === "unsolicited_output" || cause._tag === "malformed_reply") && cause.detail.includes("invalid JSON")
    ? " (stdout carries replies only: a log or debug line belongs on stderr)"
    : cause._tag === "timed_out"
      ? " (no reply in time: a handler that hangs, or a reply left in its stdout buffer: flush after each reply)"
      : ""
