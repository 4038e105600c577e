import { Runtime, Schema } from "effect"

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
      ? `${this.file} holds no case`
      : `${this.failed} of ${this.total} cases in ${this.file} failed`
  }
}
