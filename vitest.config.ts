import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { defineConfig } from "vitest/config"
import { bundledBin } from "./test/support/cli-bundle.ts"

// One temporary folder per run for everything the tests (and what they spawn) make: removed by the global setup's
// teardown (test/support/temp-dir.setup.ts).
const runTmp = process.env["ABHED_TEST_TMPDIR"] ?? NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-test-"))
process.env["ABHED_TEST_TMPDIR"] = runTmp

/*
 * Tuned for the reference machine (2 cores), where most of the suite's time is spent waiting on child processes
 * (extensions, the CLI) and starting them:
 * - two workers, not vitest's default of cores − 1 (one here): one file's processes run while another file waits;
 * - no per-file module isolation: no test file changes global state (metrics are compared as deltas), so each
 *   worker imports effect and the packages once instead of once per file;
 * - Node's compile cache for every Node process the tests start (the CLI, TypeScript extensions): each loads effect
 *   from source, and the cache saves about a fifth of that CPU after the first run.
 * - the CLI the tests start is its source bundled into one file once per run (test/support/cli-bundle.ts): starting it
 *   costs about a third of the CPU of loading effect and the packages from hundreds of modules, and the CLI is
 *   started more than a hundred times. `ABHED_TEST_CLI=source` runs the CLI from source instead;
 * - TMPDIR: one folder per run, removed at the end (test/support/temp-dir.setup.ts).
 * Real-process tests keep their margins under this load: see test/support/extension-helpers.ts and `pnpm test:stress`.
 */
export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    maxWorkers: 2,
    isolate: false,
    globalSetup: ["test/support/temp-dir.setup.ts", "test/support/cli-bundle.setup.ts"],
    env: {
      TMPDIR: runTmp,
      ...(process.env["ABHED_TEST_CLI"] === "source" ? {} : { ABHED_TEST_CLI_BIN: bundledBin(runTmp) }),
      NODE_COMPILE_CACHE:
        process.env["NODE_COMPILE_CACHE"] ??
        NodePath.join(import.meta.dirname, "node_modules", ".cache", "node-compile-cache")
    },
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
