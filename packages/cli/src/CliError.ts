import { printable, printableLines } from "@abhed/host/Printable"
import { Runtime, Schema } from "effect"

/**
 * Failures that end the CLI with a documented exit code (docs/cli.md). Each is reported to stderr by the command
 * that raises it, so the runtime is told not to log it again (`errorReported`) and which code to exit with.
 */

/**
 * The config file is missing, unreadable or invalid: exit 2. `detail` is the host's report (`ConfigUnreadable`,
 * `ConfigInvalid`): one line per problem, each naming the file and the path inside it.
 */
export class ConfigRejected extends Schema.TaggedError<ConfigRejected>()("ConfigRejected", {
  file: Schema.String,
  detail: Schema.String
}) {
  override get [Runtime.errorExitCode](): number {
    return 2
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return this.detail
  }
}

/** `check` found at least one violation: exit 1 (the report is already printed). */
export class CheckFailed extends Schema.TaggedError<CheckFailed>()("CheckFailed", {
  failed: Schema.Array(Schema.String)
}) {
  override get [Runtime.errorExitCode](): number {
    return 1
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return `failed checks: ${this.failed.join(", ")}`
  }
}

/** `run --strict`: no extension was configured, or one died: exit 1 (one line on stderr, after the output). */
export class StrictRunFailed extends Schema.TaggedError<StrictRunFailed>()("StrictRunFailed", {
  problem: Schema.String
}) {
  override get [Runtime.errorExitCode](): number {
    return 1
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return `abhed-ext run --strict: ${this.problem}`
  }
}

/** `abhed-ext test`: a case failed, or the file held none: exit 1 (the report is already printed). */
export class CasesFailed extends Schema.TaggedError<CasesFailed>()("CasesFailed", {
  file: Schema.String,
  failed: Schema.Number,
  total: Schema.Number
}) {
  override get [Runtime.errorExitCode](): number {
    return 1
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return this.total === 0
      ? `${printable(this.file)} holds no case`
      : `${this.failed} of ${this.total} cases in ${printable(this.file)} failed`
  }
}

/**
 * `abhed-ext replay`: a decision changed (`--fail-on any`) or became looser (`--fail-on looser`), or an audit line
 * could not be read as a record: exit 1 (the report is already printed).
 */
export class ReplayFailed extends Schema.TaggedError<ReplayFailed>()("ReplayFailed", { problem: Schema.String }) {
  override get [Runtime.errorExitCode](): number {
    return 1
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return `abhed-ext replay: ${this.problem}`
  }
}

/** An input file (events, examples) could not be read: exit 1. Reported as one line on stderr, not a trace. */
export class InputUnreadable extends Schema.TaggedError<InputUnreadable>()("InputUnreadable", {
  file: Schema.String,
  detail: Schema.String
}) {
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    // A file name is anyone's (a glob over a shared folder): shown escaped, it cannot drive the terminal.
    return `cannot read ${printable(this.file)}: ${printableLines(this.detail).join("\n")}`
  }
}

/** import-hooks: a generated adapter would not start (its flags do not parse): exit 1, and no config is printed. */
export class AdapterWouldNotStart extends Schema.TaggedError<AdapterWouldNotStart>()("AdapterWouldNotStart", {
  problems: Schema.Array(Schema.String)
}) {
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return this.problems.join("\n")
  }
}

/**
 * A file the command writes (`run --audit`, `-o`, `test --junit`, `audit --html`) could not be opened or written:
 * exit 1, one line on stderr, not a trace.
 */
export class OutputUnwritable extends Schema.TaggedError<OutputUnwritable>()("OutputUnwritable", {
  file: Schema.String,
  detail: Schema.String
}) {
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return `cannot write ${printable(this.file)}: ${printableLines(this.detail).join("\n")}`
  }
}
