import { globMatch } from "@abhed/core"
import type { ExtensionConfig } from "@abhed/protocol"

/**
 * The environment an extension starts with (docs/design.md#environment): a baseline of the host's variables that programs need to
 * run at all, what its `env_passthrough` names (names or `*` globs), and its own `env` (which wins). Nothing else
 * of the host's environment: API keys and cloud credentials stay with the agent, since an extension is a file
 * dropped into a folder, exactly what docs/design.md#the-one-rule does not trust.
 */

/** Passed through to every extension: names, or `*` globs. */
export const Baseline: ReadonlyArray<string> = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TERM", "TMPDIR", "TZ"]

/** A name or a glob where `*` matches any run of characters (and nothing else is special). */
export const nameMatcher = (pattern: string): (name: string) => boolean => {
  if (!pattern.includes("*")) return (name) => name === pattern
  // The policy's glob (core), with `?` and `\` escaped so that only `*` is special.
  const glob = pattern.replace(/[\\?]/g, "\\$&")
  return (name) => globMatch(glob, name)
}

export const environmentFor = (
  config: Pick<ExtensionConfig, "env" | "env_passthrough">,
  host: { readonly [name: string]: string | undefined }
): Record<string, string> => {
  const matchers = [...Baseline, ...config.env_passthrough].map(nameMatcher)
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(host)) {
    if (value !== undefined && matchers.some((matches) => matches(name))) env[name] = value
  }
  return { ...env, ...config.env }
}
