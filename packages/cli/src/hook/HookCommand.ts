import { Command } from "effect/cli"
import { flags, settle } from "./HookFlags.ts"
import { argsProblem } from "../ArgsProblem.ts"
import { lazyHandler } from "../LazyHandler.ts"

/**
 * Why `abhed-ext hook ARGS` would not start (`args`: what follows `hook`), or undefined when it would: `args` go
 * through this very command's parser and checks, and nothing is run. `import-hooks` checks what it generates with
 * it, since an adapter that exits at startup is a guard lost.
 */
export const hookArgsProblem = (args: ReadonlyArray<string>) =>
  argsProblem("hook", flags, ({ format, matcher, toolNames }) => settle(format, matcher, toolNames), args)

/**
 * `abhed-ext hook --format claude|gemini [--matcher M] [--tool-names ours=peer,…] [--timeout-ms N] [--fail-closed]
 * -- COMMAND [ARGS…]`: a long-lived extension that runs a Claude Code or Gemini CLI command hook once per event, under
 * veto-only rules (docs/hooks.md). stdout carries replies and nothing else; everything else goes to stderr.
 */
export const hook = Command.make(
  "hook",
  flags,
  lazyHandler(() => import("./HookServe.ts").then((m) => m.serveHook))
).pipe(
  Command.withShortDescription("Run a Claude Code or Gemini CLI command hook as an extension"),
  Command.withDescription(
    "A long-lived extension that runs an existing Claude Code or Gemini CLI command hook once per event: the " +
      "peer's input JSON on its stdin, its exit code and JSON answer mapped back under veto-only rules (deny and " +
      "exit 2 block, ask asks, allow is no opinion, updatedInput rewrites). Each run is bounded by --timeout-ms " +
      "and the hook killed with everything it started on overrun. Put it in abhed.json as an extension's command; see docs/hooks.md."
  ),
  Command.withExamples([
    {
      command: "abhed-ext hook --format claude --matcher Bash -- python3 .claude/hooks/bash_validator.py",
      description: "a Claude Code PreToolUse hook on Bash"
    },
    {
      command: "abhed-ext hook --format gemini --matcher run_shell_command --fail-closed -- .gemini/hooks/guard.sh",
      description: "a Gemini CLI BeforeTool hook that blocks when it cannot answer"
    }
  ])
)
