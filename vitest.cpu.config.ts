import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { defineConfig, mergeConfig } from "vitest/config"
import base from "./vitest.config.ts"

/**
 * The suite with a per-file account of its CPU (`pnpm test:cpu [files...]`, Linux): test/support/cpu-usage.setup.ts
 * writes one line per test file to `ABHED_TEST_CPU_OUT` (default node_modules/.cache/test-cpu.jsonl, emptied at
 * the start), and test/support/cpu-report.ts prints them, dearest first. For finding where the suite's time goes:
 * on two cores the suite is CPU-bound, most of it in the processes the tests start.
 */
const out =
  process.env["ABHED_TEST_CPU_OUT"] ?? NodePath.join(import.meta.dirname, "node_modules", ".cache", "test-cpu.jsonl")
process.env["ABHED_TEST_CPU_OUT"] = out
NodeFs.mkdirSync(NodePath.dirname(out), { recursive: true })
NodeFs.writeFileSync(out, "")

export default mergeConfig(
  base,
  defineConfig({
    test: {
      setupFiles: ["test/support/cpu-usage.setup.ts"],
      env: { ABHED_TEST_CPU_OUT: out }
    }
  })
)
