#!/usr/bin/env node
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Runtime } from "effect"
import { main } from "./Cli.ts"

// stdout failing stops the run the way Ctrl-C does, so the extensions are still shut down by their finalizers
// (nothing outlives the session's scope: docs/design.md#lifecycle) rather than orphaned by an uncaught exception. A
// reader that goes away (`abhed-ext demo | head`: EPIPE) is an interruption (exit 130) and no error worth a line; any
// other failure (a full disk: ENOSPC) is one line on stderr and exit 1, after the close sequence. The error can also
// arrive after the command is done (`check` and `import-hooks` write their output last): the teardown looks for it.
let stdoutFailure: NodeJS.ErrnoException | undefined
let finished = false
const stdoutFailed = (error: NodeJS.ErrnoException): void => {
  if (stdoutFailure !== undefined) return
  stdoutFailure = error
  if (error.code !== "EPIPE") {
    const stopping = finished ? "" : "; stopping the extensions"
    process.stderr.write(`abhed-ext: cannot write to stdout: ${error.code ?? error.message}${stopping}\n`)
  }
}
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  const first = stdoutFailure === undefined
  stdoutFailed(error)
  // Once the command is done, its teardown decides the exit code; a signal then would kill the process outright.
  if (first && !finished) process.kill(process.pid, "SIGTERM")
})

// A closed terminal or a dropped ssh (SIGHUP), and SIGQUIT, must not skip the close sequence and orphan the
// extensions' children: treat them as SIGTERM, which runMain turns into an interruption, so every extension's
// finalizer runs (session_end, close stdin, grace, SIGTERM, SIGKILL: docs/design.md#lifecycle).
for (const signal of ["SIGHUP", "SIGQUIT"] as const) {
  process.on(signal, () => process.kill(process.pid, "SIGTERM"))
}

// When the command is done, every finalizer has run (the extensions are stopped, their pipes closed or given up):
// exit once stdout has taken what was written (a failing `check`'s report can be more than a pipe holds), rather
// than wait on a handle nobody will close: a helper an extension started with setsid can hold a pipe the CLI no
// longer reads from (`check` waited for it to die). A reader that never drains gets FlushMillis, not forever.
const FlushMillis = 5000
const teardown: Runtime.Teardown = (exit, _onExit) =>
  Runtime.defaultTeardown(exit, (code) => {
    finished = true
    // Exit here for every code: for 0, runMain would wait for the loop to empty.
    const done = (error?: Error | null) => {
      const failure: NodeJS.ErrnoException | undefined = stdoutFailure ?? process.stdout.errored ?? error ?? undefined
      if (failure === undefined) return process.exit(code)
      stdoutFailed(failure)
      process.exit(failure.code === "EPIPE" ? (code === 0 ? 130 : code) : 1)
    }
    const bound = setTimeout(done, FlushMillis)
    process.stdout.write("", (error) => {
      clearTimeout(bound)
      done(error)
    })
  })

// `pnpm abhed-ext …` / `node packages/cli/src/bin.ts …`: exit codes come from the failure (see CliError.ts).
// `main` reports its own crashes, to stderr (Cli.ts): runMain's report would go to stdout.
NodeRuntime.runMain(main, { disableErrorReporting: true, teardown })
