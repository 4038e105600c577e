import * as NodeFs from "node:fs"

/**
 * Vitest global setup: every temporary folder the tests make (fixtures' configs, audit files, pack folders, the
 * CLI's and extensions' own) goes under one folder per run (TMPDIR, set in vitest.config.ts), removed at the end,
 * so a run leaves nothing behind in the machine's /tmp.
 */
export default function setup(): () => void {
  const folder = process.env["ABHED_TEST_TMPDIR"]
  return () => {
    if (folder !== undefined) NodeFs.rmSync(folder, { recursive: true, force: true })
  }
}
