import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { defineConfig } from "vitest/config"
import { bundledBin } from "./test/support/cli-bundle.ts"

// One temporary folder per run for everything the tests (and what they spawn) make: removed by the global setup's
// teardown (test/support/temp-dir.setup.ts).
const runTmp = process.env["ABHED_TEST_TMPDIR"] ?? NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-test-"))
process.env["ABHED_TEST_TMPDIR"] = runTmp

/**
 * `python3` without a version manager's shim: pyenv's is a bash script that runs a dozen more, about 0.6 s of CPU per
 * start (four times Python's own), and the tests start python3 extensions hundreds of times. When the `python3` on
 * PATH is a script, the tests' PATH starts with a folder holding only `python3`, a link to the interpreter the shim
 * runs: the same Python, started directly. Where `python3` is the interpreter itself, nothing changes.
 */
const pythonWithoutShim = (): string | undefined => {
  const found = (process.env["PATH"] ?? "")
    .split(NodePath.delimiter)
    .map((dir) => NodePath.join(dir, "python3"))
    .find((file) => NodeFs.existsSync(file))
  if (found === undefined || !NodeFs.readFileSync(found).subarray(0, 2).equals(Buffer.from("#!"))) return undefined
  const r = NodeChildProcess.spawnSync(found, ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" })
  const interpreter = r.status === 0 ? r.stdout.trim() : ""
  if (interpreter === "" || interpreter === found) return undefined
  const dir = NodePath.join(runTmp, "python-bin")
  NodeFs.mkdirSync(dir, { recursive: true })
  // Another vitest of the same run (its temporary folder shared) may have made it already.
  if (!NodeFs.existsSync(NodePath.join(dir, "python3"))) NodeFs.symlinkSync(interpreter, NodePath.join(dir, "python3"))
  return dir
}
const pythonBin = pythonWithoutShim()

/*
 * Tuned for the reference machine (2 cores), where most of the suite's time is spent waiting on child processes
 * (extensions, the CLI) and starting them:
 * - two workers, not vitest's default of cores − 1 (one here): one file's processes run while another file waits;
 * - no per-file module isolation: no test file changes global state (metrics are compared as deltas), so each
 *   worker imports effect and the packages once instead of once per file; the one global state they share, effect's
 *   default metric registry, is emptied before each file (test/support/metric-registry.setup.ts);
 * - Node's compile cache for every Node process the tests start (the CLI, TypeScript extensions): each loads effect
 *   from source, and the cache saves about a fifth of that CPU after the first run.
 * - the CLI the tests start is its source bundled once per run (test/support/cli-bundle.ts: an entry and the chunks
 *   its commands load when they run): starting it costs about a third of the CPU of loading effect and the packages
 *   from hundreds of modules, and the CLI is started hundreds of times. `ABHED_TEST_CLI=source` runs the CLI from source instead;
 * - TMPDIR: one folder per run, removed at the end (test/support/temp-dir.setup.ts);
 * - python3 started without a version manager's shim (pythonWithoutShim above).
 * Real-process tests keep their margins under this load: see test/support/extension-helpers.ts and `pnpm test:stress`.
 */
export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    maxWorkers: 2,
    isolate: false,
    globalSetup: ["test/support/temp-dir.setup.ts", "test/support/cli-bundle.setup.ts"],
    setupFiles: ["test/support/metric-registry.setup.ts"],
    env: {
      TMPDIR: runTmp,
      ...(pythonBin === undefined ? {} : { PATH: `${pythonBin}${NodePath.delimiter}${process.env["PATH"] ?? ""}` }),
      ...(process.env["ABHED_TEST_CLI"] === "source" ? {} : { ABHED_TEST_CLI_BIN: bundledBin(runTmp) }),
      NODE_COMPILE_CACHE:
        process.env["NODE_COMPILE_CACHE"] ??
        NodePath.join(import.meta.dirname, "node_modules", ".cache", "node-compile-cache")
    },
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
