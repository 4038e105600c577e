import { Command } from "effect/cli"
import { lazyHandler } from "../LazyHandler.ts"

/** The demo (DemoMain.ts), loaded when it runs: `abhed-ext demo`, and `abhed-ext` with no command (Cli.ts). */
export const showDemo = lazyHandler(async () => {
  const { runDemo } = await import("./DemoMain.ts")
  return (_: unknown) => runDemo
})

export const demo = Command.make("demo", {}, showDemo).pipe(
  Command.withShortDescription("Show the example extensions deciding a recorded session"),
  Command.withDescription(
    "Run the bundled example extensions (docs/examples/abhed.json) over the bundled recorded session " +
      "(docs/examples/session.jsonl) and print, per event, what each extension said (or why it was dead or timed " +
      "out), the rounds, and the final decision; then a summary. Coloured when stdout is a terminal. Also what " +
      "`abhed-ext` does with no arguments. Exit codes: 0 done, 1 failure, 2 the example config is invalid."
  ),
  Command.withExamples([
    { command: "abhed-ext demo", description: "run the demo" },
    { command: "pnpm demo", description: "the same, from the repository root" },
    { command: "abhed-ext demo | less", description: "plain text when piped" }
  ])
)
