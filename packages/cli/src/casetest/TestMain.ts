import { printable } from "@abhed/host/Printable"
import { canonicalJson } from "@abhed/protocol"
import { Clock, Console, Effect, FileSystem, Option, Result, Stream } from "effect"
import { Command } from "effect/cli"
import { CasesFailed, OutputUnwritable } from "../CliError.ts"
import { loadConfig, StdinConfig } from "../ConfigFile.ts"
import { inputLines } from "../Input.ts"
import { outputClash } from "../OutputClash.ts"
import { type RecordingHost, startHost } from "../replay/ReplayHost.ts"
import { styleFor } from "../Style.ts"
import { failUsage } from "../Usage.ts"
import { type CaseVerdict, checkCall, checkResult, withFailures, withSeen } from "./CaseCheck.ts"
import { type JUnitCase, renderJUnit } from "./JUnit.ts"
import { decodeCase, type TestCase } from "./TestCase.ts"
import type { flags } from "./TestCommand.ts"

/** Every case is decided in this one session, in file order, by one start of the config's extensions. */
export const TestSessionId = "abhed-ext-test"

/** A case's name in the report: its own, else what it sends. */
const caseName = (c: TestCase): string => {
  if (c.name !== undefined) return c.name
  const args = canonicalJson(c.args)
  const shown = args.length > 80 ? `${args.slice(0, 80)}…` : args
  return c.kind === "call" ? `${c.tool} ${shown}` : `tool_result of ${c.tool} ${shown}`
}

interface CaseReport {
  readonly where: string
  readonly name: string
  readonly verdict: CaseVerdict
  readonly seconds: number
  /** A line that is not a case: what is wrong with it. */
  readonly malformed?: string | undefined
}

/**
 * What came holds the extensions' reasons (and the cases their own text): shown escaped (`printable`), so an
 * extension's reason cannot drive the terminal (retitle it, clear the FAIL lines away, write the clipboard).
 */
const printReport = (r: CaseReport) => {
  const s = styleFor()
  const head = r.verdict.passed ? s.green("PASS") : s.red("FAIL")
  const p = printable
  if (r.malformed !== undefined) return Console.log(`${head} ${p(`${r.where}: malformed case: ${r.malformed}`)}`)
  if (r.verdict.passed) return Console.log(`${head} ${p(`${r.where} ${r.name}: ${r.verdict.came}`)}`)
  return Console.log(
    [
      `${head} ${p(`${r.where} ${r.name}`)}`,
      `     expected: ${p(r.verdict.expected)}`,
      `     came:     ${p(r.verdict.came)}`,
      ...r.verdict.problems.map((problem) => `     - ${p(problem)}`)
    ].join("\n")
  )
}

/** What `abhed-ext test` does once its flags are parsed (TestCommand.ts). */
export const testMain = Effect.fn("test")(function* ({
  cases,
  config,
  junit
}: Command.Command.Config.Infer<typeof flags>) {
  if (config === StdinConfig && cases === "-") {
    return yield* failUsage(
      ["abhed-ext", "test"],
      "--config - reads the config from stdin, so the cases must come from a file"
    )
  }
  const clash = Option.isSome(junit)
    ? yield* outputClash("--junit", junit.value, [
        { file: cases, role: "the cases file" },
        ...(config === StdinConfig ? [] : [{ file: config, role: "the config file" }])
      ])
    : undefined
  if (clash !== undefined) return yield* failUsage(["abhed-ext", "test"], clash)
  const loaded = yield* loadConfig(config)
  if (loaded.config.extensions.length === 0) {
    yield* Console.error(`abhed-ext test: warning: ${config} configures no extensions: the policy alone decides`)
  }
  const lines = yield* Stream.runCollect(yield* inputLines(Option.some(cases)))
  const decoded = Array.from(lines).flatMap((text, i) =>
    text.trim() === "" ? [] : [{ where: `${cases}:${i + 1}`, result: decodeCase(text) }]
  )
  const started = yield* Clock.currentTimeMillis
  const reports: Array<CaseReport> = []
  yield* Effect.scoped(
    Effect.gen(function* () {
      // The extensions start at the first case: a file of malformed lines never starts them.
      let recording: RecordingHost | undefined
      for (const { result, where } of decoded) {
        let report: CaseReport
        if (Result.isFailure(result)) {
          const verdict = { passed: false, expected: "a case", came: "a malformed line", problems: [result.failure] }
          report = { where, name: "malformed case", verdict, seconds: 0, malformed: result.failure }
        } else {
          const c = result.success
          recording ??= yield* startHost(loaded, TestSessionId)
          const { host, last } = recording
          const t0 = yield* Clock.currentTimeMillis
          const verdict =
            c.kind === "call"
              ? withFailures(
                  checkCall(c, yield* host.toolCall({ tool: c.tool, args: c.args, call_id: c.callId })),
                  yield* last,
                  c.failing
                )
              : withFailures(
                  checkResult(
                    c,
                    yield* host.toolResult({
                      tool: c.tool,
                      args: c.args,
                      content: c.content,
                      is_error: c.isError,
                      call_id: c.callId
                    }),
                    yield* last
                  ),
                  yield* last,
                  c.failing
                )
          report = {
            where,
            name: caseName(c),
            verdict: withSeen(verdict, yield* last),
            seconds: ((yield* Clock.currentTimeMillis) - t0) / 1000
          }
        }
        reports.push(report)
        yield* printReport(report)
      }
    })
  )
  const failed = reports.filter((r) => !r.verdict.passed)
  yield* Console.log(
    printable(
      `${reports.length} case${reports.length === 1 ? "" : "s"}: ${reports.length - failed.length} passed, ${failed.length} failed` +
        (failed.length > 0 ? ` (${failed.map((r) => r.where).join(", ")})` : "")
    )
  )
  if (Option.isSome(junit)) {
    const fs = yield* FileSystem.FileSystem
    const junitCases = reports.map(
      (r): JUnitCase => ({
        name: `${r.where} ${r.name}`,
        classname: cases,
        seconds: r.seconds,
        failure: r.verdict.passed
          ? undefined
          : {
              message: r.verdict.problems.join("; "),
              type: r.malformed !== undefined ? "malformed" : "mismatch",
              detail:
                r.malformed !== undefined
                  ? r.malformed
                  : [`expected: ${r.verdict.expected}`, `came: ${r.verdict.came}`, ...r.verdict.problems].join("\n")
            }
      })
    )
    const xml = renderJUnit([
      {
        name: cases,
        timestamp: new Date(started).toISOString(),
        seconds: ((yield* Clock.currentTimeMillis) - started) / 1000,
        cases: junitCases
      }
    ])
    yield* fs.writeFileString(junit.value, xml).pipe(
      Effect.mapError((e) => new OutputUnwritable({ file: junit.value, detail: e.message })),
      Effect.tapError((e) => Console.error(e.message))
    )
  }
  if (reports.length === 0 || failed.length > 0) {
    const error = new CasesFailed({ file: cases, failed: failed.length, total: reports.length })
    if (reports.length === 0) yield* Console.error(`abhed-ext test: ${error.message}`)
    return yield* error
  }
})
