import { Runtime, Schema } from "effect"

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
