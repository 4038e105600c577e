import * as StderrTail from "@abhed/host/StderrTail"
import { printable, printableLines } from "@abhed/host/Printable"
import type { CheckResult } from "./CheckResult.ts"
import type { Style } from "../Style.ts"
import { jsonLine } from "../JsonText.ts"

/** `abhed-ext check` output: one line per check (plus indented details), or one JSON document with `--json`. */

const mark = (r: CheckResult, s: Style): string =>
  r.status === "pass" ? s.green("PASS") : r.status === "fail" ? s.red("FAIL") : s.yellow("SKIP")

const latency = (r: CheckResult): string =>
  r.latency === undefined ? "" : `  (p50 ${r.latency.p50_ms} ms, max ${r.latency.max_ms} ms)`

/** The command as a POSIX shell would take it back: arguments with spaces or metacharacters are single-quoted. */
export const commandLine = (argv: ReadonlyArray<string>): string =>
  argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(" ")

export const renderText = (
  target: string,
  results: ReadonlyArray<CheckResult>,
  stderrTail: string,
  s: Style
): string => {
  const lines = [s.bold(`abhed-ext check: ${target}`)]
  for (const r of results) {
    lines.push(`${mark(r, s)}  ${r.id}: ${r.title}${s.dim(latency(r))}`)
    // Details quote what the extension wrote: shown escaped, as its stderr below.
    for (const d of r.details.slice(0, 8)) lines.push(`        ${printable(d)}`)
    if (r.details.length > 8) lines.push(`        … and ${r.details.length - 8} more`)
  }
  const failed = results.filter((r) => r.status === "fail")
  const passed = results.filter((r) => r.status === "pass").length
  lines.push(
    failed.length === 0
      ? s.green(`ok: ${passed}/${results.length} checks passed`)
      : s.red(`failed: ${failed.map((r) => r.id).join(", ")} (${passed}/${results.length} passed)`)
  )
  // Shown when it passed too: what an extension warns of while it answers (an MCP adapter that cannot reach its
  // server declares no tools, and says so only there) is what a passing check would otherwise hide.
  if (stderrTail.trim() !== "") {
    // The line that says why, first: a stack trace's last lines hide it (Node prints the error above its stack).
    const why = failed.length > 0 ? StderrTail.errorLine(stderrTail) : undefined
    if (why !== undefined) lines.push(`extension error (its stderr): ${why}`)
    lines.push(
      s.dim(failed.length > 0 ? "extension stderr (last lines):" : "extension stderr (last lines; it passed):")
    )
    // Control characters escaped: the extension's escape sequences must not clear the screen over the FAIL lines,
    // retitle the terminal or write the clipboard; each line it wrote is one line here (a lone \r included).
    for (const l of printableLines(stderrTail.trimEnd()).slice(-10)) lines.push(s.dim(`  | ${l}`))
  }
  return lines.join("\n")
}

export interface JsonReport {
  readonly command: ReadonlyArray<string>
  readonly ok: boolean
  readonly checks: ReadonlyArray<CheckResult>
  readonly stderr_tail: string
  /** The line of `stderr_tail` that says why the extension failed (StderrTail.errorLine), when there is one. */
  readonly stderr_error?: string
}

export const renderJson = (
  command: ReadonlyArray<string>,
  results: ReadonlyArray<CheckResult>,
  stderrTail: string
): string => {
  const why = StderrTail.errorLine(stderrTail)
  const report: JsonReport = {
    command,
    ok: results.every((r) => r.status !== "fail"),
    checks: results,
    stderr_tail: stderrTail
  }
  return jsonLine(why === undefined ? report : { ...report, stderr_error: why })
}
