import * as NodeChildProcess from "node:child_process"
import * as NodePath from "node:path"

/**
 * `pnpm test:cpu [vitest args...]`: the suite (or the files given) under vitest.cpu.config.ts, then the per-file
 * table (test/support/cpu-report.ts), whether or not every test passed. Exits with vitest's status (1 when it did
 * not start or was killed).
 */
const root = NodePath.join(import.meta.dirname, "..", "..")
const vitest = NodeChildProcess.spawnSync(
  "vitest",
  ["run", "--config", "vitest.cpu.config.ts", ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit" }
)
// A vitest that never ran (not found) or was killed is a failure, whatever the report prints; one that never ran
// has no table (the file holds an older run's).
if (vitest.error !== undefined) process.stderr.write(`test:cpu: vitest not started: ${vitest.error.message}\n`)
else {
  if (vitest.signal !== null) process.stderr.write(`test:cpu: vitest ended by ${vitest.signal}\n`)
  NodeChildProcess.spawnSync(process.execPath, [NodePath.join(import.meta.dirname, "cpu-report.ts")], {
    cwd: root,
    stdio: "inherit"
  })
}
process.exitCode = vitest.status ?? 1
