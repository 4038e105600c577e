import { createHash } from "node:crypto"
import { gzipSync } from "node:zlib"
import type { ReportData } from "./ReportData.ts"
import { reportScript } from "./ReportScript.ts"
import { reportStyle } from "./ReportStyle.ts"

/**
 * `abhed-ext audit --html`: one self-contained page (pure). What the page draws is computed here (ReportData.ts) and
 * goes in as JSON, gzipped, in base64; the records themselves go in as their lines, gzipped in chunks of
 * `ChunkSize`, each in base64 on a line of its own, and the page unpacks a chunk (natively, DecompressionStream)
 * only when a record's drill-down is opened. Gzipped, the page is a fraction of the size of the text (for 100k
 * records, the browser's HTML parser reading the page's bytes is most of the time to first draw), and base64 holds no
 * `<`: no record, file name or bad line can close its block. The page's own script builds everything with
 * textContent (ReportScript.ts). Its Content-Security-Policy lets nothing load and runs that one script only (by its
 * hash): a report opened from a mail or a share reaches no network, and markup slipped into it would not run.
 */

/** Records per gzipped chunk: small enough to unpack at a click, large enough to compress well. */
export const ChunkSize = 1024

export interface ReportInput {
  readonly data: ReportData
  /** Each record's line as it is in its file, in the order of `data`'s rows. */
  readonly lines: ReadonlyArray<string>
}

const scriptHash = `sha256-${createHash("sha256").update(reportScript).digest("base64")}`

const packedText = (text: string): string => gzipSync(text, { level: 6 }).toString("base64")

const chunks = (lines: ReadonlyArray<string>): string => {
  const packed: Array<string> = []
  for (let i = 0; i < lines.length; i += ChunkSize) {
    packed.push(packedText(lines.slice(i, i + ChunkSize).join("\n")))
  }
  return packed.join("\n")
}

export const renderReport = (input: ReportInput): string => {
  const n = input.data.n
  const meta = JSON.stringify({ ...input.data, chunk: ChunkSize })
  return [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src '${scriptHash}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>abhed-ext audit: ${n} records</title>`,
    `<style>${reportStyle}</style>`,
    "</head><body>",
    "<h1>abhed-ext audit</h1>",
    `<section id="summary"><p class="dim">Reading ${n} records…</p></section>`,
    `<section><h2>Tool calls over time, by verdict</h2><div id="decisions"></div></section>`,
    `<section><h2>Latency per extension</h2><div id="latency"></div></section>`,
    `<section><h2>Deaths, with their causes</h2><div id="deaths"></div></section>`,
    `<section><h2>What each extension (or the policy) denied, asked for or rewrote</h2><div id="vetoes"></div></section>`,
    `<section><h2>Every record</h2><div id="calls"></div></section>`,
    `<section><h2>The chosen record</h2><div id="drill"><p class="dim">Click a row to see what each extension said about it.</p></div></section>`,
    `<section id="footer"></section>`,
    `<script type="application/gzip+base64" id="audit-data">${packedText(meta)}</script>`,
    `<script type="application/gzip+base64" id="audit-records">\n${chunks(input.lines)}\n</script>`,
    `<script>${reportScript}</script>`,
    "</body></html>",
    ""
  ].join("\n")
}
