import type { AuditEntry, BadLine } from "./AuditEntry.ts"

export interface ReportInput {
  readonly files: ReadonlyArray<string>
  readonly entries: ReadonlyArray<AuditEntry>
  readonly bad: ReadonlyArray<BadLine>
}

export const renderReport = (input: ReadonlyArray<unknown> | ReportInput): string => String(input)
