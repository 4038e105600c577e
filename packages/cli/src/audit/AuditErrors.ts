import { Runtime, Schema } from "effect"

/**
 * `abhed-ext audit` read lines that are not records, or files it could not read: exit 1, after the records it
 * could read were shown (each bad line was reported on stderr as it was met, naming its file and line).
 */
export class AuditLinesRejected extends Schema.TaggedError<AuditLinesRejected>()("AuditLinesRejected", {
  badLines: Schema.Number,
  unreadableFiles: Schema.Array(Schema.String)
}) {
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    const parts = [
      ...(this.badLines > 0 ? [`${this.badLines} line(s) that are not audit records were skipped`] : []),
      ...(this.unreadableFiles.length > 0 ? [`${this.unreadableFiles.length} file(s) could not be read`] : [])
    ]
    return `abhed-ext audit: ${parts.join("; ")}`
  }
}
