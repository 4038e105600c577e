import { Option, Result } from "effect"
import { Argument, Flag } from "effect/cli"
import { type HookFormat, HookFormats } from "./HookFormat.ts"
import { parseMatcher } from "./HookMatcher.ts"
import { parseToolNames } from "./HookToolNames.ts"
import { failUsage } from "../Usage.ts"
import { positive } from "../DurationFlags.ts"

/**
 * `abhed-ext hook`'s flags and the checks after them, apart from the command and what it runs, so that the CLI's start
 * reads only these (LazyHandler.ts) and `import-hooks` checks the lines it writes with the very same parser.
 */

/** Below the extension's own default `timeout_ms` (5000), so an overrunning hook is ours to kill, not the host's. */
export const DefaultHookTimeoutMs = 4000

/** A flag value or command `hook` cannot use: exit 64, as for any usage error (Usage.ts). */
export const usage = (problem: string) => failUsage(["abhed-ext", "hook"], problem)

export const flags = {
  format: Flag.Literals("format", HookFormats).pipe(
    Flag.withDescription("whose hook this is: claude (Claude Code) or gemini (Gemini CLI)")
  ),
  matcher: Flag.String("matcher").pipe(
    Flag.withDescription(
      "the hook's matcher, with the peer's rules (exact names, a | list, or a regex); unmatched calls get {} without a run"
    ),
    Flag.optional
  ),
  toolNames: Flag.String("tool-names").pipe(
    Flag.withDescription("ours=peer tool names over the defaults, e.g. bash=Bash,read=Read"),
    Flag.optional
  ),
  timeoutMs: Flag.Int("timeout-ms").pipe(
    Flag.withDescription(
      "how long one run of the hook may take; then it is killed with everything it started (keep it below the extension's timeout_ms)"
    ),
    Flag.withDefault(DefaultHookTimeoutMs),
    positive
  ),
  failClosed: Flag.Boolean("fail-closed").pipe(
    Flag.withDescription(
      "a run that fails (timeout, crash, cannot start, an exit code other than 0 and 2, stdout over 16 MiB, an answer it cannot read) blocks, whatever the extension's on_failure (without it, the run is answered failed: on_failure decides)"
    ),
    Flag.withDefault(false)
  ),
  command: Argument.String("command").pipe(Argument.withDescription("the hook's command (after --)")),
  args: Argument.String("args").pipe(Argument.withDescription("its arguments"), Argument.variadic())
}

/** What `hook` checks of its flags after parsing them: the matcher compiles, the tool names are pairs. */
export const settle = (format: HookFormat, matcher: Option.Option<string>, namesSpec: Option.Option<string>) => {
  const parsedMatcher = parseMatcher(format, Option.getOrUndefined(matcher))
  if (Result.isFailure(parsedMatcher)) return Result.fail(`--matcher: ${parsedMatcher.failure}`)
  const overrides = Option.isSome(namesSpec) ? parseToolNames(namesSpec.value) : Result.succeed({})
  if (Result.isFailure(overrides)) return Result.fail(overrides.failure)
  return Result.succeed({ matcher: parsedMatcher.success, overrides: overrides.success })
}
