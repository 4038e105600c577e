import type { ConfigFile, PolicyRuleFile } from "./ConfigSchema.ts"
import type { EventName } from "./Event.ts"

/**
 * The decoded, defaulted configuration (`abhed.json`, docs/design.md#configuration): what `decodeConfig` gives. The file as written
 * is `ConfigFile` (ConfigSchema.ts); `configFromFile` below fills in the defaults, the one place they are applied.
 * Relative `cwd` is resolved by the host against the config file's folder, since that needs the file system.
 */
export type OnFailure = "ignore" | "ask" | "deny"
export const OnFailureValues: ReadonlyArray<OnFailure> = ["ignore", "ask", "deny"]

/** Whether a reply must echo the request's `id` (docs/design.md#wire-protocol). A reply that carries a wrong id is fatal either way. */
export type ReplyIds = "optional" | "required"
export const ReplyIdsValues: ReadonlyArray<ReplyIds> = ["optional", "required"]

export interface ExtensionConfig {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The events this extension receives. Omitted or empty in the file = all events. */
  readonly events: ReadonlyArray<EventName>
  readonly timeout_ms: number
  readonly startup_timeout_ms: number
  readonly on_failure: OnFailure
  /** As written in the file (relative to the config file's folder); undefined = that folder. */
  readonly cwd: string | undefined
  /** Added to the host's environment. */
  readonly env: { readonly [key: string]: string }
  /** Time between closing stdin and SIGTERM, and between SIGTERM and SIGKILL. */
  readonly grace_ms: number
  /** Names or `*` globs of the host's environment variables passed through beyond the baseline (docs/design.md#failures). */
  readonly env_passthrough: ReadonlyArray<string>
  /** Whether a reply without `id` is malformed (docs/design.md#wire-protocol). */
  readonly reply_ids: ReplyIds
  /** Which tool calls this extension takes part in (docs/design.md#combination); undefined = every call. */
  readonly match: ReadonlyArray<PolicyRule> | undefined
}

export type PolicyLevel = "allow" | "ask" | "deny"

/** A policy rule: a tool name (glob) and globs on named args; every named arg must match. */
export interface PolicyRule {
  readonly tool: string
  readonly args: { readonly [arg: string]: string }
  readonly reason: string | undefined
}

export interface PolicyConfig {
  readonly deny: ReadonlyArray<PolicyRule>
  readonly ask: ReadonlyArray<PolicyRule>
  readonly allow: ReadonlyArray<PolicyRule>
  readonly default: PolicyLevel
}

export interface Config {
  readonly extensions: ReadonlyArray<ExtensionConfig>
  readonly policy: PolicyConfig
  readonly max_rewrite_rounds: number
  readonly builtin_tools: ReadonlyArray<string>
  /** In the managed layer: ignore the other layers' extensions (docs/configuration.md). */
  readonly allow_managed_only?: boolean | undefined
}

export const Defaults = {
  timeout_ms: 5000,
  startup_timeout_ms: 10000,
  grace_ms: 1000,
  on_failure: "ignore",
  reply_ids: "optional",
  max_rewrite_rounds: 4,
  builtin_tools: [] as ReadonlyArray<string>,
  policy: { deny: [], ask: [], allow: [], default: "allow" } satisfies PolicyConfig
} as const

/** The fields of an extension's config as written: everything but `name` and `command` may be left out. */
export type ExtensionConfigInput = Pick<ExtensionConfig, "name" | "command"> & {
  readonly [K in Exclude<keyof ExtensionConfig, "name" | "command">]?: ExtensionConfig[K] | undefined
}

/** An extension's config with the defaults of docs/design.md#configuration filled in: the one place those defaults are applied. */
export const extensionConfig = (input: ExtensionConfigInput): ExtensionConfig => ({
  name: input.name,
  command: input.command,
  args: input.args ?? [],
  events: input.events ?? [],
  timeout_ms: input.timeout_ms ?? Defaults.timeout_ms,
  startup_timeout_ms: input.startup_timeout_ms ?? Defaults.startup_timeout_ms,
  on_failure: input.on_failure ?? Defaults.on_failure,
  cwd: input.cwd,
  env: input.env ?? {},
  grace_ms: input.grace_ms ?? Defaults.grace_ms,
  env_passthrough: input.env_passthrough ?? [],
  reply_ids: input.reply_ids ?? Defaults.reply_ids,
  match: input.match
})

/** A policy (or `match`) rule as written, with its defaults: no args constraints, no reason. */
export const policyRule = (rule: PolicyRuleFile): PolicyRule => ({
  tool: rule.tool,
  args: rule.args ?? {},
  reason: rule.reason
})

/** The decoded file with every default of docs/design.md#configuration filled in. */
export const configFromFile = (file: ConfigFile): Config => ({
  extensions: (file.extensions ?? []).map((x) => extensionConfig({ ...x, match: x.match?.map(policyRule) })),
  policy: {
    deny: (file.policy?.deny ?? []).map(policyRule),
    ask: (file.policy?.ask ?? []).map(policyRule),
    allow: (file.policy?.allow ?? []).map(policyRule),
    default: file.policy?.default ?? Defaults.policy.default
  },
  max_rewrite_rounds: file.max_rewrite_rounds ?? Defaults.max_rewrite_rounds,
  builtin_tools: file.builtin_tools ?? Defaults.builtin_tools,
  allow_managed_only: file.allow_managed_only ?? false
})
