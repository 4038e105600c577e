#!/usr/bin/env node
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Runtime } from "effect"
import { main } from "./Cli.ts"

// stdout failing stops the run the way Ctrl-C does, so the extensions are still shut down by their finalizers
// (DESIGN §4: nothing outlives the scope) rather than orphaned by an uncaught exception. A reader that goes away
// (`abhed-ext demo | head`: EPIPE) is an interruption (exit 130) and no error worth a line; any other failure
// (a full disk: ENOSPC) is one line on stderr and exit 1, after the close sequence.
let closing = false
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (closing) return
  closing = true
  if (error.code !== "EPIPE") {
    process.stderr.write(`abhed-ext: cannot write to stdout: ${error.code ?? error.message}; stopping the extensions\n`)
    process.once("exit", () => {
      process.exitCode = 1
    })
  }
  process.kill(process.pid, "SIGTERM")
})

// A closed terminal or a dropped ssh (SIGHUP), and SIGQUIT, must not skip the close sequence and orphan the
// extensions' children: treat them as SIGTERM, which runMain turns into an interruption, so every extension's
// finalizer runs (session_end, close stdin, grace, SIGTERM, SIGKILL: DESIGN §4).
for (const signal of ["SIGHUP", "SIGQUIT"] as const) {
  process.on(signal, () => process.kill(process.pid, "SIGTERM"))
}

// When the command is done, every finalizer has run (the extensions are stopped, their pipes closed or given up):
// exit once stdout has taken what was written (a failing `check`'s report can be more than a pipe holds), rather
// than wait on a handle nobody will close: a helper an extension started with setsid can hold a pipe the CLI no
// longer reads from (`check` waited for it to die). A reader that never drains gets FlushMillis, not forever.
const FlushMillis = 5000
const teardown: Runtime.Teardown = (exit, onExit) =>
  Runtime.defaultTeardown(exit, (code) => {
    // runMain exits for a non-zero code; for 0 it would wait for the loop to empty, so exit here.
    const done = () => (code === 0 ? process.exit(0) : onExit(code))
    const bound = setTimeout(done, FlushMillis)
    process.stdout.write("", () => {
      clearTimeout(bound)
      done()
    })
  })

// `pnpm abhed-ext …` / `node packages/cli/src/bin.ts …`: exit codes come from the failure (see CliError.ts).
// `main` reports its own crashes, to stderr (Cli.ts): runMain's report would go to stdout.
NodeRuntime.runMain(main, { disableErrorReporting: true, teardown })
