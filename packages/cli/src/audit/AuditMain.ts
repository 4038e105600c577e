import { printable } from "@abhed/host/Printable"
import { Console, Effect, Option, Stream } from "effect"
import { Command } from "effect/cli"
import * as NodeFs from "node:fs"
import { InputUnreadable, OutputUnwritable } from "../CliError.ts"
import { inputLines } from "../Input.ts"
import { outputClash } from "../OutputClash.ts"
import { styleFor } from "../Style.ts"
import { failUsage } from "../Usage.ts"
import { type AuditEntry, type BadLine, isBadLine, readLine } from "./AuditEntry.ts"
import { AuditLinesRejected } from "./AuditErrors.ts"
import { type AuditFilter, matches } from "./AuditFilter.ts"
import { renderReport } from "./AuditReport.ts"
import { reportBuilder } from "./ReportData.ts"
import { renderEntry } from "./AuditText.ts"
import type { flags } from "./AuditCommand.ts"
import { jsonText } from "../JsonText.ts"

/**
 * `abhed-ext audit FILE…`: the records of `run --audit` files, filtered, shown as the demo shows a session (text),
 * passed through (`--json`), or drawn as one self-contained HTML page (`--html OUT`). A line that is not a record
 * is reported on stderr (file:line: what is wrong) and skipped; the others are still shown, and the command then
 * exits 1, so that a script notices.
 */

type Mode = { readonly _tag: "text" } | { readonly _tag: "json" } | { readonly _tag: "html"; readonly out: string }

const reportBad = (bad: BadLine) =>
  Console.error(`abhed-ext audit: ${printable(bad.file)}:${bad.line}: ${printable(bad.problem)}`)

/** Reads every file in turn, and hands each matching record to `onEntry` as it is read. */
const readAll = (
  files: ReadonlyArray<string>,
  filter: AuditFilter,
  onEntry: (entry: AuditEntry) => Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const bad: Array<BadLine> = []
    const unreadable: Array<string> = []
    let read = 0
    for (const file of files) {
      const lines = yield* inputLines(Option.some(file))
      yield* lines.pipe(
        Stream.zipWithIndex,
        Stream.runForEach(([text, index]) => {
          if (text.trim() === "") return Effect.void
          const entry = readLine(file, index + 1, text)
          if (isBadLine(entry)) {
            bad.push(entry)
            return reportBad(entry)
          }
          read++
          return matches(filter, entry.record) ? onEntry(entry) : Effect.void
        }),
        // Already said on stderr (Input.ts): the other files are still read.
        Effect.catchTag("InputUnreadable", (e: InputUnreadable) => Effect.sync(() => unreadable.push(e.file)))
      )
    }
    return { bad, unreadable, read }
  })

const writeReport = (out: string, html: string) =>
  Effect.try({
    // Owner only, as the audit itself: the page holds the args verbatim.
    try: () => NodeFs.writeFileSync(out, html, { mode: 0o600 }),
    catch: (e) => new OutputUnwritable({ file: out, detail: e instanceof Error ? e.message : String(e) })
  }).pipe(Effect.tapError((e) => Console.error(printable(e.message))))

const runAudit = (files: ReadonlyArray<string>, filter: AuditFilter, mode: Mode) =>
  Effect.gen(function* () {
    const s = styleFor(process.stdout)
    // For the page, the aggregates as the records go by, and their lines: the decoded records of a large audit
    // would only weigh on the heap.
    const builder = reportBuilder(files)
    const lines: Array<string> = []
    let shown = 0
    const onEntry = (entry: AuditEntry): Effect.Effect<void> => {
      shown++
      switch (mode._tag) {
        case "json":
          // The line as it is in the file, but for what a terminal would obey (the same JSON value).
          return Console.log(jsonText(entry.text))
        case "text":
          return Console.log(`${renderEntry(entry, s)}\n`)
        case "html":
          return Effect.sync(() => {
            builder.add(entry)
            lines.push(entry.text)
          })
      }
    }
    const { bad, read, unreadable } = yield* readAll(files, filter, onEntry)
    if (mode._tag === "html") {
      yield* writeReport(mode.out, renderReport({ data: builder.finish(bad), lines }))
      yield* Console.error(`abhed-ext audit: ${printable(mode.out)}: ${shown} of ${read} records`)
    } else if (mode._tag === "text") {
      yield* Console.log(s.dim(`${shown} of ${read} records shown`))
    }
    if (bad.length > 0 || unreadable.length > 0) {
      const failure = new AuditLinesRejected({ badLines: bad.length, unreadableFiles: unreadable })
      yield* Console.error(failure.message)
      return yield* Effect.fail(failure)
    }
  })

/** What `abhed-ext audit` does once its flags are parsed (AuditCommand.ts). */
export const auditMain = Effect.fn("audit")(function* ({
  call,
  decision,
  extension,
  files,
  html,
  json
}: Command.Command.Config.Infer<typeof flags>) {
  if (json && Option.isSome(html)) return yield* failUsage(["abhed-ext", "audit"], "--json and --html: give one")
  const mode: Mode = Option.isSome(html)
    ? { _tag: "html", out: html.value }
    : json
      ? { _tag: "json" }
      : { _tag: "text" }
  if (mode._tag === "html") {
    const reads = files.map((file) => ({ file, role: "an audit file it reports on" }))
    const clash = yield* outputClash("--html", mode.out, reads)
    if (clash !== undefined) return yield* failUsage(["abhed-ext", "audit"], clash)
  }
  yield* runAudit(files, { calls: call, extensions: extension, decisions: decision }, mode)
})
