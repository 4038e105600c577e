import { buildCliBundle } from "./cli-bundle.ts"

/** Vitest global setup: the CLI bundle the tests run (test/cli-bundle.ts), built before any test starts. */
export default async function setup(): Promise<void> {
  if (process.env["ABHED_TEST_CLI"] !== "source") await buildCliBundle()
}
