import * as NodeChildProcess from "node:child_process"
import * as NodePath from "node:path"

/**
 * `pnpm test:cpu [vitest args...]`: the suite (or the files given) under vitest.cpu.config.ts, then the per-file
 * table (test/support/cpu-report.ts), whether or not every test passed. Exits with vitest's status.
 */
const root = NodePath.join(import.meta.dirname, "..", "..")
const vitest = NodeChildProcess.spawnSync(
  "vitest",
  ["run", "--config", "vitest.cpu.config.ts", ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit" }
)
const report = NodeChildProcess.spawnSync(process.execPath, [NodePath.join(import.meta.dirname, "cpu-report.ts")], {
  cwd: root,
  stdio: "inherit"
})
process.exitCode = vitest.status ?? report.status ?? 1
