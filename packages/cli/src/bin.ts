#!/usr/bin/env node
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { main } from "./Cli.ts"

// A reader that goes away (`abhed-ext demo | head`) is not an error worth a stack trace. Stop the way Ctrl-C
// does, so the extensions are still shut down by their finalizers rather than orphaned by process.exit.
let closing = false
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error
  if (!closing) {
    closing = true
    process.kill(process.pid, "SIGTERM")
  }
})

// A closed terminal or a dropped ssh (SIGHUP), and SIGQUIT, must not skip the close sequence and orphan the
// extensions' children: treat them as SIGTERM, which runMain turns into an interruption, so every extension's
// finalizer runs (session_end, close stdin, grace, SIGTERM, SIGKILL: DESIGN §4).
for (const signal of ["SIGHUP", "SIGQUIT"] as const) {
  process.on(signal, () => process.kill(process.pid, "SIGTERM"))
}

// `pnpm abhed-ext …` / `node packages/cli/src/bin.ts …`: exit codes come from the failure (see CliError.ts).
// `main` reports its own crashes, to stderr (Cli.ts): runMain's report would go to stdout.
NodeRuntime.runMain(main, { disableErrorReporting: true })
