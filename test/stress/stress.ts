/**
 * `pnpm test:stress [--rounds N] [--no-full] [--soak-events N] [FILE...]`: runs the real-process test files
 * (the .test.ts files in test/'s folders and packages/extension/test, and the host's PollBarrier test, or the FILEs
 * given) N times in a row (default 5) while CPU burners keep every core busy, and prints how many rounds each file
 * passed. Then, still under the burners, the soak (test/stress/soak.ts: 100 000 events with random faults, deaths and
 * restarts; open fds and memory flat), unless `--soak-events 0` or FILEs are given. Exit code 0 only if every round of
 * every file passed and the soak held.
 *
 * The first round runs at full size (`ABHED_FULL=1`, unless `--no-full`): the fault matrix's full product, and
 * thousands of model-checked sessions and fuzzed lines instead of the few dozen `pnpm test` runs
 * (test/failures/: fault-matrix, fault-model, fuzz-*). The other rounds run the usual sizes.
 *
 * A real-process test that fails here depends on a wall-clock margin a busy machine can eat: give it the margins in
 * test/support/extension-helpers.ts (`Patient`, `within`) instead of retrying it. Run this before changing the process
 * layer (packages/host/src/ProcessExtension.ts, ExtensionCore.ts) or any real-process test.
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

const root = NodePath.join(import.meta.dirname, "..", "..")

interface Options {
  readonly rounds: number
  readonly full: boolean
  readonly files: ReadonlyArray<string>
  readonly soakEvents: number
}

const usage = "usage: pnpm test:stress [--rounds N] [--no-full] [--soak-events N] [FILE...]"

const parseArgs = (argv: ReadonlyArray<string>): Options => {
  let rounds = 5
  let full = true
  let soakEvents: number | undefined
  const files: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ""
    if (arg === "--") continue
    if (arg === "--rounds") {
      rounds = Number(argv[++i])
      if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: expected a whole number ≥ 1\n${usage}`)
    } else if (arg === "--soak-events") {
      soakEvents = Number(argv[++i])
      if (!Number.isInteger(soakEvents) || soakEvents < 0) {
        throw new Error(`--soak-events: expected a whole number ≥ 0\n${usage}`)
      }
    } else if (arg === "--no-full") {
      full = false
    } else if (arg.startsWith("-")) {
      throw new Error(`unknown option ${arg}\n${usage}`)
    } else {
      files.push(arg)
    }
  }
  return { rounds, full, files, soakEvents: soakEvents ?? (files.length > 0 ? 0 : 100_000) }
}

/**
 * Every real-process test file: test/'s folders hold the cross-package and real-process tests; the SDK's tests run it. Also
 * the host's poll-barrier test, which runs over real sockets and the real event loop.
 */
const defaultFiles = (): ReadonlyArray<string> => [
  ...["test", NodePath.join("packages", "extension", "test")].flatMap((dir) =>
    NodeFs.readdirSync(NodePath.join(root, dir), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".test.ts"))
      .sort()
      .map((f) => NodePath.join(dir, f))
  ),
  NodePath.join("packages", "host", "test", "PollBarrier.test.ts")
]

/** One busy loop per core, at normal priority: the load of a second test run or a busy CI box, or more. */
const startBurners = (): ReadonlyArray<NodeChildProcess.ChildProcess> =>
  Array.from({ length: NodeOs.availableParallelism() }, () =>
    NodeChildProcess.spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" })
  )

interface FileResult {
  readonly file: string
  readonly passed: boolean
  readonly failures: ReadonlyArray<string>
}

interface JsonReport {
  readonly testResults?: ReadonlyArray<{
    readonly name: string
    readonly status: string
    readonly message?: string
    readonly assertionResults?: ReadonlyArray<{ readonly fullName: string; readonly status: string }>
  }>
}

/** One round: the files in one vitest run (its usual workers), read back per file from the JSON report. */
const runRound = (files: ReadonlyArray<string>, round: number, full: boolean): Promise<ReadonlyArray<FileResult>> =>
  new Promise((resolve) => {
    const folder = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-stress-"))
    const report = NodePath.join(folder, "report.json")
    const vitest = NodePath.join(root, "node_modules", "vitest", "vitest.mjs")
    const child = NodeChildProcess.spawn(
      process.execPath,
      [vitest, "run", "--reporter=dot", "--reporter=json", `--outputFile.json=${report}`, ...files],
      {
        cwd: root,
        stdio: ["ignore", "inherit", "inherit"],
        env: { ...process.env, ...(full ? { ABHED_FULL: "1" } : {}) }
      }
    )
    child.on("close", () => {
      const parsed: JsonReport = NodeFs.existsSync(report) ? JSON.parse(NodeFs.readFileSync(report, "utf8")) : {}
      NodeFs.rmSync(folder, { recursive: true, force: true }) // read: nothing of the round is left in /tmp
      resolve(
        files.map((file): FileResult => {
          const entry = parsed.testResults?.find((r) => NodePath.relative(root, r.name) === NodePath.normalize(file))
          if (entry === undefined)
            return { file, passed: false, failures: [`round ${round}: no result (vitest crashed?)`] }
          const failed = (entry.assertionResults ?? []).filter((a) => a.status === "failed").map((a) => a.fullName)
          const passed = entry.status === "passed"
          return {
            file,
            passed,
            failures: passed
              ? []
              : (failed.length > 0 ? failed : [entry.message ?? entry.status]).map((f) => `round ${round}: ${f}`)
          }
        })
      )
    })
  })

/** The soak (test/stress/soak.ts) in its own Node process, with a GC it can force: resolves to whether it held. */
const runSoak = (events: number): Promise<boolean> =>
  new Promise((resolve) => {
    const child = NodeChildProcess.spawn(
      process.execPath,
      ["--expose-gc", NodePath.join(import.meta.dirname, "soak.ts"), "--events", String(events)],
      { cwd: root, stdio: ["ignore", "inherit", "inherit"] }
    )
    child.on("close", (code) => resolve(code === 0))
  })

const main = async () => {
  const options = parseArgs(process.argv.slice(2))
  const files = options.files.length > 0 ? options.files : defaultFiles()
  for (const f of files) if (!NodeFs.existsSync(NodePath.join(root, f))) throw new Error(`no such test file: ${f}`)
  const burners = startBurners()
  const stop = () => burners.forEach((b) => b.kill("SIGKILL"))
  process.on("exit", stop)
  process.on("SIGINT", () => process.exit(130))
  console.log(
    `stress: ${files.length} files × ${options.rounds} rounds${options.full ? " (the first at full size)" : ""}, ${burners.length} CPU burners`
  )
  const started = Date.now()
  let soakHeld = true
  const tally = new Map(files.map((f) => [f, { passed: 0, failures: [] as Array<string> }]))
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const roundStarted = Date.now()
      const results = await runRound(files, round, options.full && round === 1)
      for (const r of results) {
        const t = tally.get(r.file)
        if (t === undefined) continue
        if (r.passed) t.passed++
        t.failures.push(...r.failures)
      }
      const failed = results.filter((r) => !r.passed).length
      console.log(
        `\nround ${round}/${options.rounds}: ${failed} of ${files.length} files failed (${((Date.now() - roundStarted) / 1000).toFixed(0)} s)`
      )
    }
    if (options.soakEvents > 0) {
      console.log("")
      soakHeld = await runSoak(options.soakEvents)
    }
  } finally {
    stop()
  }
  const width = Math.max(...files.map((f) => f.length))
  console.log(`\n${"file".padEnd(width)}  passed  failed`)
  let failures = 0
  for (const [file, t] of tally) {
    const failedRounds = options.rounds - t.passed
    failures += failedRounds
    console.log(`${file.padEnd(width)}  ${String(t.passed).padStart(6)}  ${String(failedRounds).padStart(6)}`)
    for (const f of t.failures) console.log(`    ${f}`)
  }
  console.log(
    `\n${failures === 0 ? "0 failures" : `${failures} failed file runs`} in ${((Date.now() - started) / 1000).toFixed(0)} s`
  )
  if (!soakHeld) console.log("the soak failed (see its lines above)")
  process.exitCode = failures === 0 && soakHeld ? 0 : 1
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error))
  process.exitCode = 2
})
