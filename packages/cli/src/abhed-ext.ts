#!/usr/bin/env node
// The `abhed-ext` command. The startup check runs before anything imports effect: a static import of the CLI
// would be linked (every module found) before any code ran, so a mismatched effect would fail with a missing
// module deep inside it rather than with the one line that says what to run. Then the CLI proper (bin.ts).
import { preflight } from "./Preflight.ts"

const problem = preflight()
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`)
  process.exit(1)
}
await import("./bin.ts")
