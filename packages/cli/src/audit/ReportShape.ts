import type { BadLine } from "./AuditEntry.ts"

/** The shape of what the HTML report draws (ReportData.ts computes it; the page reads it as JSON). */

export interface ExtensionStats {
  readonly name: string
  readonly replies: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly failures: number
  readonly allows: number
  /** Each distinct pixel of the timeline: x × 64 + y, y = 63 for a reply above the cap (drawn at the top, red). */
  readonly points: ReadonlyArray<number>
}

export interface Death {
  readonly extension: string
  readonly record: number
  readonly status: string
  readonly error: string
  readonly stderr: unknown
}

export interface Vetoes {
  readonly name: string
  readonly deny: Array<number>
  readonly ask: Array<number>
  readonly rewrote: Array<number>
}

/** One column per field, a record per index; strings as indices into `strings` (-1: absent). */
export interface Rows {
  readonly file: Array<number>
  readonly line: Array<number>
  readonly time: Array<number>
  readonly session: Array<number>
  readonly call: Array<number>
  readonly event: Array<number>
  readonly tool: Array<number>
  /** The args as JSON, whole (the search reads them; the list clips them). */
  readonly args: Array<number>
  /** 0 none (not a tool call), 1 allow, 2 ask, 3 deny. */
  readonly decision: Array<number>
  readonly reasons: Array<number>
  readonly took: Array<number>
  /** Index into `askedSets`: the extensions asked about the record (replied or failed to). */
  readonly asked: Array<number>
}

export interface ReportData {
  readonly files: ReadonlyArray<string>
  readonly bad: ReadonlyArray<BadLine>
  readonly n: number
  readonly counts: { readonly allow: number; readonly ask: number; readonly deny: number; readonly other: number }
  readonly tmin: number | null
  readonly tmax: number | null
  readonly slices: { readonly allow: Array<number>; readonly ask: Array<number>; readonly deny: Array<number> }
  readonly timeline: { readonly width: number; readonly height: number }
  readonly extensions: ReadonlyArray<ExtensionStats>
  readonly deaths: ReadonlyArray<Death>
  readonly vetoes: ReadonlyArray<Vetoes>
  readonly strings: ReadonlyArray<string>
  /** Sets of extension names (as indices into `strings`). */
  readonly askedSets: ReadonlyArray<ReadonlyArray<number>>
  readonly rows: Rows
}
