import { createHash } from "node:crypto"
import { gzipSync } from "node:zlib"
import type { AuditEntry, BadLine } from "./AuditEntry.ts"
import { reportScript } from "./ReportScript.ts"
import { reportStyle } from "./ReportStyle.ts"

/**
 * `abhed-ext audit --html`: one self-contained page (pure). The records go into the page as their JSON text,
 * gzipped, in base64: a tenth of the size or less (a record repeats its extensions' names and statuses), which the
 * browser unpacks natively (DecompressionStream) far faster than it parses the same text as HTML; and base64 holds
 * no `<`, so no record can close its block. The rest (file names, bad lines) goes in as JSON in a
 * `<script type="application/json">` block, with every `<`, `>` and `&` (and the two JavaScript line separators)
 * written as a `\u` escape: JSON that means the same, in which nothing can close the block (`</script>`) or open a
 * comment. The page's own script builds everything with textContent (ReportScript.ts). Its Content-Security-Policy
 * lets nothing load and runs that one script only (by its hash): a report opened from a mail or a share reaches no
 * network, and markup slipped into it would not run.
 */

export interface ReportInput {
  readonly files: ReadonlyArray<string>
  /** Where each record was read, and its line (the page needs no more: it reads the JSON itself). */
  readonly entries: ReadonlyArray<Pick<AuditEntry, "file" | "line" | "text">>
  readonly bad: ReadonlyArray<BadLine>
}

const Unsafe = /[<>&\u2028\u2029]/g

/** JSON text made safe inside a script element: the characters that could end it, as `\u` escapes. */
export const scriptSafe = (jsonText: string): string =>
  jsonText.replace(Unsafe, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

const scriptHash = `sha256-${createHash("sha256").update(reportScript).digest("base64")}`

export const renderReport = (input: ReportInput): string => {
  const fileIndex = new Map(input.files.map((file, i) => [file, i]))
  const where: Array<number> = []
  for (const entry of input.entries) where.push(fileIndex.get(entry.file) ?? 0, entry.line)
  const meta = JSON.stringify({ files: input.files, bad: input.bad, where })
  // Each line parsed as one JSON object: joined, they are a JSON array, without parsing and printing them again.
  const records = `[${input.entries.map((entry) => entry.text).join(",")}]`
  return [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src '${scriptHash}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>abhed-ext audit: ${input.entries.length} records</title>`,
    `<style>${reportStyle}</style>`,
    "</head><body>",
    "<h1>abhed-ext audit</h1>",
    `<section id="summary"><p class="dim">Reading ${input.entries.length} records…</p></section>`,
    `<section><h2>Tool calls over time, by verdict</h2><div id="decisions"></div></section>`,
    `<section><h2>Latency per extension</h2><div id="latency"></div></section>`,
    `<section><h2>Deaths, with their causes</h2><div id="deaths"></div></section>`,
    `<section><h2>What each extension (or the policy) denied, asked for or rewrote</h2><div id="vetoes"></div></section>`,
    `<section><h2>Every record</h2><div id="calls"></div></section>`,
    `<section><h2>The chosen record</h2><div id="drill"><p class="dim">Click a row to see what each extension said about it.</p></div></section>`,
    `<section id="footer"></section>`,
    `<script type="application/json" id="audit-meta">${scriptSafe(meta)}</script>`,
    `<script type="application/gzip+base64" id="audit-records">${gzipSync(records, { level: 4 }).toString("base64")}</script>`,
    `<script>${reportScript}</script>`,
    "</body></html>",
    ""
  ].join("\n")
}
