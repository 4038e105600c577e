import { MaxTimerMs } from "@abhed/protocol"
import type { HookFormat } from "./HookFormat.ts"

/**
 * The bounds an imported hook's timeout gets: the peer's figure in whole milliseconds, and the slack the extension
 * that runs it gets above that (read by HookSettings.ts, written into the config by HookConfig.ts).
 */

/** Slack between the hook's own bound and the extension's, for the adapter's round trip and the spawn. */
export const ExtensionSlackMs = 1000
/** The extension's `startup_timeout_ms` is the hook's bound plus this (the first exchange also starts Node). */
export const StartupSlackMs = 5 * ExtensionSlackMs

/**
 * The longest `--timeout-ms` import-hooks writes: about 24.8 days, "forever" in practice. It leaves room for the
 * slack above, so that the extension's `timeout_ms` and `startup_timeout_ms` stay within what a timer can wait
 * (HookRunner.ts), which is also the most `run` accepts for them.
 */
export const MaxHookTimeoutMs = MaxTimerMs - StartupSlackMs

/**
 * A hook's `timeout` (Claude: seconds, Gemini: milliseconds) in whole milliseconds the adapter accepts: at least 1
 * (a `--timeout-ms 0` is refused, and the guard would never run) and at most `MaxHookTimeoutMs`. `adjusted` says
 * when it is not the peer's own figure.
 */
export const timeoutOf = (
  format: HookFormat,
  timeout: unknown
): { readonly ms: number | undefined; readonly adjusted?: string } => {
  if (typeof timeout !== "number" || !(timeout > 0)) return { ms: undefined }
  const given = `its timeout of ${timeout} ${format === "claude" ? "s" : "ms"}`
  const exact = format === "claude" ? timeout * 1000 : timeout
  if (exact > MaxHookTimeoutMs) {
    return {
      ms: MaxHookTimeoutMs,
      adjusted: `${given} is longer than a timer can wait: clamped to ${MaxHookTimeoutMs} ms (about 24.8 days, "forever")`
    }
  }
  const ms = Math.round(exact)
  return ms >= 1 ? { ms } : { ms: 1, adjusted: `${given} is under 1 ms: rounded up to 1 ms` }
}
