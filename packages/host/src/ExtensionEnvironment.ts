import { globMatch } from "@abhed/core"
import type { ExtensionConfig } from "@abhed/protocol"
import { Effect } from "effect"

/**
 * The environment an extension starts with (docs/design.md#environment): a baseline of the host's variables that
 * programs need to run at all, what its `env_passthrough` names (names or `*` globs), and its own `env` (which wins).
 * Nothing else of the host's environment: API keys and cloud credentials stay with the agent, since an extension is a
 * file dropped into a folder, and nothing vouches for it.
 */

/**
 * Passed through to every extension: names only. The locale variables are listed one by one: a glob such as
 * `LC_*` would pass `LC_SECRET` too.
 */
export const Baseline: ReadonlyArray<string> = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "TMPDIR",
  "TZ",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_ADDRESS",
  "LC_COLLATE",
  "LC_CTYPE",
  "LC_IDENTIFICATION",
  "LC_MEASUREMENT",
  "LC_MESSAGES",
  "LC_MONETARY",
  "LC_NAME",
  "LC_NUMERIC",
  "LC_PAPER",
  "LC_TELEPHONE",
  "LC_TIME",
  // A folder, no secret: where Node keeps what it compiled. A Node extension started without it compiles its modules
  // (TypeScript stripped of types included) anew at every start: about twice the CPU of a start with it.
  "NODE_COMPILE_CACHE"
]

/** A name or a glob where `*` matches any run of characters (and nothing else is special). */
export const nameMatcher = (pattern: string): ((name: string) => boolean) => {
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
  // SHLVL at least 1: `bash -c`, started with a socket as stdin (Node's pipes to a child are socket pairs) and no
  // SHLVL, takes itself for a command run by sshd and sources ~/.bashrc, whose output on stdout would kill the
  // extension and whose work (pyenv, nvm) each start would pay. A given SHLVL (passthrough or `env`) wins.
  return { SHLVL: "1", ...env, ...config.env }
}

/** Credentials agents commonly run with: what a glob in `env_passthrough` must not pass unnoticed. */
export const KnownSecrets: ReadonlyArray<string> = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AZURE_CLIENT_SECRET",
  "GITHUB_TOKEN",
  "GH_TOKEN",
  "GITLAB_TOKEN",
  "NPM_TOKEN",
  "HF_TOKEN",
  "DATABASE_URL",
  "PGPASSWORD",
  "SSH_AUTH_SOCK",
  // The OpenTelemetry collector's credential (`authorization=Bearer%20…`): `OTEL_*` must not pass it unnoticed.
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
  "OTEL_EXPORTER_OTLP_LOGS_HEADERS"
]

/** A variable name that looks like it holds a credential (the host's own variables are checked against it). */
const secretShape =
  /SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_KEY|(^|_)(KEY|AUTH|SESSION|COOKIE)(_|$)/i

/** A known credential, or a name shaped like one (`import-mcp` withholds such a variable's literal value). */
export const looksLikeSecretName = (name: string): boolean => KnownSecrets.includes(name) || secretShape.test(name)

const shown = 3

/**
 * What is wrong with an extension's `env_passthrough`, one warning per pattern: `*`, which passes every variable,
 * and each glob that matches a known credential or a secret-shaped variable of the host (`AWS_*` passes
 * `AWS_SECRET_ACCESS_KEY`). A name passes exactly that variable, as asked: no warning.
 */
export const passthroughWarnings = (
  config: Pick<ExtensionConfig, "name" | "env_passthrough">,
  hostNames: Iterable<string>
): ReadonlyArray<string> => {
  const candidates = [...new Set([...KnownSecrets, ...[...hostNames].filter((name) => secretShape.test(name))])].sort()
  const warnings: Array<string> = []
  for (const pattern of new Set(config.env_passthrough)) {
    if (!pattern.includes("*")) continue
    const where = `extension ${config.name}: env_passthrough ${JSON.stringify(pattern)}`
    if (pattern.replaceAll("*", "") === "") {
      warnings.push(
        `${where} passes every variable of the host, API keys and credentials included: name the ones it needs`
      )
      continue
    }
    const matches = nameMatcher(pattern)
    const secrets = candidates.filter(matches)
    if (secrets.length === 0) continue
    const listed =
      secrets.slice(0, shown).join(", ") + (secrets.length > shown ? ` and ${secrets.length - shown} more` : "")
    warnings.push(`${where} passes secrets such as ${listed}: name the variables it needs instead`)
  }
  return warnings
}

/** Logs `passthroughWarnings` for the host's current environment, at Warning: when an extension is set up. */
export const warnAboutPassthrough = (config: Pick<ExtensionConfig, "name" | "env_passthrough">): Effect.Effect<void> =>
  Effect.forEach(passthroughWarnings(config, Object.keys(process.env)), (warning) => Effect.logWarning(warning), {
    discard: true
  })
