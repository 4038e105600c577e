import { buildCliBundle, bundledBin } from "./cli-bundle.ts"

/** Vitest global setup: the CLI bundle the tests run (cli-bundle.ts), built before any test starts. */
export default async function setup(): Promise<void> {
  const runTmp = process.env["ABHED_TEST_TMPDIR"]
  if (process.env["ABHED_TEST_CLI"] !== "source" && runTmp !== undefined) await buildCliBundle(bundledBin(runTmp))
}
