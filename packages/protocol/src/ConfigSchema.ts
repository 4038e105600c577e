import { Schema } from "effect"
import { Defaults, OnFailureValues, ReplyIdsValues } from "./Config.ts"
import { EventName, EventNames } from "./Event.ts"

/**
 * The `abhed.json` file format as an effect Schema (DESIGN §5). It describes the file as written (every key
 * optional but `name` and `command`), not the defaulted `Config`: editors validate against the JSON Schema
 * generated from it, and `decodeConfig` enforces the same rules with friendlier messages (a test keeps the two
 * in agreement).
 */

/** Extension names: a portable, shell-safe identifier; "policy" names the policy engine in decisions. */
export const ExtensionNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/u
export const ReservedExtensionNames: ReadonlyArray<string> = ["policy"]
// The `u` flag is what lets effect export a pattern to JSON Schema (whose regexes are Unicode-aware).
const ExtensionNameRule = /^(?!policy$)[A-Za-z0-9][A-Za-z0-9._-]*$/u

/** Environment variable names: what `execve` accepts (non-empty, no "=", no NUL). */
export const EnvNamePattern = /^[^=\u0000]+$/u

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER))
const NonNegativeInt = Schema.Int.check(
  Schema.isGreaterThanOrEqualTo(0),
  Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER)
)
const Env = Schema.Record(Schema.String.check(Schema.isPattern(EnvNamePattern)), Schema.String)
const Globs = Schema.Record(Schema.String, Schema.String)

export const PolicyRuleFile = Schema.Struct({
  tool: Schema.NonEmptyString.annotate({
    description: "Tool name glob: `*` matches any run of characters (including `/`), `?` one character, `\\` escapes."
  }),
  args: Schema.optionalKey(Globs.annotate({
    description:
      "Globs on named arguments; every one must match (a string argument as-is, any other value as canonical JSON). A missing argument never matches.",
    default: {}
  })),
  reason: Schema.optionalKey(Schema.String.annotate({ description: "Shown to the user and the model when the rule decides." }))
}).annotate({
  identifier: "PolicyRule",
  description: "A policy rule: matches a tool call by tool name and argument globs."
})
export type PolicyRuleFile = typeof PolicyRuleFile.Type

/** Environment variable names or `*` globs to pass through from the host. */
export const EnvPassthroughPattern = /^[^=\u0000]+$/u

export const ExtensionFile = Schema.Struct({
  name: Schema.String.check(Schema.isPattern(ExtensionNameRule)).annotate({
    description:
      "Unique name of the extension, used in reasons, audit records and ordering. Letters, digits, '.', '_', '-', starting with a letter or digit; \"policy\" is reserved."
  }),
  command: Schema.NonEmptyString.annotate({
    description:
      "The program to run: looked up on PATH when it has no '/', else a path relative to the extension's working directory (cwd)."
  }),
  args: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({ description: "Arguments passed to the command.", default: [] })
  ),
  events: Schema.optionalKey(
    Schema.Array(EventName).check(Schema.isUnique()).annotate({
      description: `The events this extension receives. Omitted or empty = all events (${EventNames.join(", ")}).`,
      default: []
    })
  ),
  timeout_ms: Schema.optionalKey(PositiveInt.annotate({
    description: "How long one reply may take, in milliseconds, counted from the write. A late reply kills the extension.",
    default: Defaults.timeout_ms
  })),
  startup_timeout_ms: Schema.optionalKey(PositiveInt.annotate({
    description: "Timeout of the first exchange (session_start), in milliseconds.",
    default: Defaults.startup_timeout_ms
  })),
  grace_ms: Schema.optionalKey(NonNegativeInt.annotate({
    description: "At shutdown: time between closing stdin and SIGTERM, and between SIGTERM and SIGKILL, in milliseconds.",
    default: Defaults.grace_ms
  })),
  on_failure: Schema.optionalKey(Schema.Literals(OnFailureValues).annotate({
    description:
      "What a dead extension means for tool calls: ignore (skip it), ask (ask for approval) or deny (block). For tool results, ask and deny withhold the content.",
    default: Defaults.on_failure
  })),
  cwd: Schema.optionalKey(Schema.NonEmptyString.annotate({
    description: "Working directory of the process, relative to this file's folder. Default: this file's folder."
  })),
  env: Schema.optionalKey(Env.annotate({
    description:
      "Environment variables set for the extension (on top of the baseline: PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM, TMPDIR, TZ).",
    default: {}
  })),
  env_passthrough: Schema.optionalKey(
    Schema.Array(Schema.String.check(Schema.isPattern(EnvPassthroughPattern))).annotate({
      description:
        "Names of the host's environment variables passed to the extension beyond the baseline; `*` matches any run of characters (\"AWS_*\"). Nothing else of the host's environment is passed.",
      default: []
    })
  ),
  reply_ids: Schema.optionalKey(Schema.Literals(ReplyIdsValues).annotate({
    description:
      "required: every reply must echo the request's id (a reply without it is malformed). optional: a reply may echo it. A reply with a wrong id kills the extension either way.",
    default: Defaults.reply_ids
  })),
  match: Schema.optionalKey(Schema.Array(PolicyRuleFile).annotate({
    description:
      "Only tool calls matching one of these rules (same shape as policy rules) are sent to this extension (tool_call and tool_result). Omitted = every call."
  }))
}).annotate({
  identifier: "Extension",
  description: "One extension: a process speaking line-delimited JSON on stdin/stdout."
})
export type ExtensionFile = typeof ExtensionFile.Type

const Rules = (level: string) =>
  Schema.optionalKey(Schema.Array(PolicyRuleFile).annotate({
    description: `Calls matching any of these rules are ${level}.`,
    default: []
  }))

export const PolicyFile = Schema.Struct({
  deny: Rules("denied"),
  ask: Rules("asked (need approval), unless a deny rule matches"),
  allow: Rules("allowed, unless a deny or ask rule matches"),
  default: Schema.optionalKey(Schema.Literals(["allow", "ask", "deny"]).annotate({
    description: "The decision when no rule matches.",
    default: Defaults.policy.default
  }))
}).annotate({
  description:
    "The operator's policy. It runs on the settled arguments; the final decision is the stricter of the policy's and the extensions'."
})
export type PolicyFile = typeof PolicyFile.Type

// Names order the combination of replies and attribute every reason, so two extensions may not share one.
// (JSON Schema cannot say this; the effect Schema and `decodeConfig` do.)
const uniqueNames = Schema.makeFilter<ReadonlyArray<ExtensionFile>>(
  (extensions) => new Set(extensions.map((e) => e.name)).size === extensions.length,
  { expected: "extensions with unique names" }
)

export const ConfigFile = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String.annotate({ description: "The JSON Schema of this file, for editors." })),
  extensions: Schema.optionalKey(Schema.Array(ExtensionFile).annotate({
    description: "The extensions to run. Names must be unique.",
    default: []
  }).check(uniqueNames)),
  policy: Schema.optionalKey(PolicyFile),
  max_rewrite_rounds: Schema.optionalKey(PositiveInt.annotate({
    description: "How many rounds of argument/content rewrites may run before the call fails closed.",
    default: Defaults.max_rewrite_rounds
  })),
  builtin_tools: Schema.optionalKey(Schema.Array(Schema.NonEmptyString).check(Schema.isUnique()).annotate({
    description: "The agent's own tool names; an extension tool with one of these names is rejected.",
    default: []
  }))
}).annotate({ title: "abhed.json", description: "Configuration of Abhed's extension host." })
export type ConfigFile = typeof ConfigFile.Type

/** The JSON Schema (draft 2020-12) of `abhed.json`, as checked in at `docs/abhed.schema.json`. */
export const configJsonSchema = (): Record<string, unknown> => {
  const doc = Schema.toJsonSchemaDocument(ConfigFile, { onExcessProperty: "error" })
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    ...doc.schema,
    ...(Object.keys(doc.definitions).length > 0 ? { $defs: doc.definitions } : {})
  }
}

/** `configJsonSchema()` as the text of `docs/abhed.schema.json`. */
export const configJsonSchemaText = (): string => `${JSON.stringify(configJsonSchema(), null, 2)}\n`
