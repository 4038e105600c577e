import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { EventNames } from "./Event.ts"
import {
  builtinToolName,
  Env,
  envName,
  extensionName,
  Globs,
  Millis,
  ms,
  noNul,
  NonEmptyString,
  oneOf,
  orUndefined,
  PathString,
  PositiveInt,
  unique,
  uniqueItems,
  withDefault
} from "./ConfigSchemaChecks.ts"
import { mcpExtension, ProtocolValues } from "./ConfigSchemaMcp.ts"

export { McpProtocolEvents, ProtocolValues } from "./ConfigSchemaMcp.ts"
export {
  EnvNamePattern,
  ExtensionNamePattern,
  isReservedExtensionName,
  MaxTimerMs,
  ReservedExtensionNames
} from "./ConfigSchemaChecks.ts"

/**
 * The `abhed.json` file format as an effect Schema (docs/design.md#configuration): the one statement of the config. It
 * describes the file as written (every key optional but `name` and `command`) on its encoded side. `decodeConfig`
 * decodes with it and words its issues for people (ConfigIssues.ts); editors validate against the JSON Schema generated
 * from it (`docs/abhed.schema.json`).
 *
 * A key that may be left out carries its default (`withDefault`): the decoded type is the defaulted `Config`
 * (Config.ts), and the same value is the JSON Schema's `default`.
 *
 * The annotations the messages are made of: `expected` (what a value must be: "must be {expected}, got …"),
 * `noun` (what a list of literals holds: `unknown event "x"; expected one of …`), `messageMissingKey`, and the
 * messages of the checks (ConfigSchemaChecks.ts) return.
 */

/** What an extension that fails does to the decision (docs/design.md#failures). */
export const OnFailureValues = ["ignore", "ask", "deny"] as const
/** Whether a reply must echo the request's `id` (docs/design.md#wire-protocol). A wrong id is fatal either way. */
export const ReplyIdsValues = ["optional", "required"] as const

export const PolicyRuleFile = Schema.Struct({
  tool: NonEmptyString("the tool name (a glob) this rule matches", " (a tool name glob)")
    .annotate({
      description: "Tool name glob: `*` matches any run of characters (including `/`), `?` one character, `\\` escapes."
    })
    .annotateKey({ messageMissingKey: "missing; the tool name (a glob) this rule matches" }),
  args: withDefault(
    {},
    Globs.annotate({
      description:
        "Globs on named arguments; every one must match (a string argument as-is, any other value as canonical JSON). A missing argument never matches.",
      expected: "an object of glob strings"
    })
  ),
  reason: orUndefined(Schema.String.annotate({ description: "Shown to the user and the model when the rule decides." }))
}).annotate({
  identifier: "PolicyRule",
  description: "A policy rule: matches a tool call by tool name and argument globs.",
  expected: `a rule object like {"tool": "bash", "args": {"command": "rm -rf *"}}`
})
/** As written in the file. */
export type PolicyRuleFile = typeof PolicyRuleFile.Encoded

const Rules = Schema.Array(PolicyRuleFile).annotate({ expected: "an array of rules" })

// An empty list would silently turn a guard off for every tool call: almost certainly not what was meant.
const nonEmptyMatch = Schema.makeFilter<ReadonlyArray<unknown>>(
  (rules) =>
    rules.length > 0 ||
    "an empty match list matches no call, so the extension would never see a tool call; leave match out to take part in every call",
  { toJsonSchema: () => ({ minItems: 1 }) }
)

export const ExtensionFile = Schema.Struct({
  name: Schema.String.check(extensionName)
    .annotate({
      description:
        "Unique name of the extension, used in reasons, audit records and ordering. Letters, digits, '.', '_', '-', starting with a letter or digit; \"policy\" and \"host\" are reserved, in any case.",
      expected: "a non-empty string (the extension's unique name)"
    })
    .annotateKey({ messageMissingKey: "missing; every extension needs a unique name" }),
  command: PathString('the program to run, e.g. "bash"')
    .annotate({
      description:
        "The program to run: looked up on PATH when it has no '/', else a path relative to the extension's working directory (cwd)."
    })
    .annotateKey({ messageMissingKey: 'missing; the program to run, e.g. "bash"' }),
  args: withDefault(
    [],
    Schema.Array(Schema.String.check(noNul("program argument"))).annotate({
      description: "Arguments passed to the command.",
      expected: "an array of strings"
    })
  ),
  events: withDefault(
    [],
    Schema.Array(
      Schema.Literals(EventNames).annotate({ noun: "event", expected: `an event name (${oneOf(EventNames)})` })
    )
      .check(uniqueItems("event"))
      .annotate({
        description: `The events this extension receives. Omitted or empty = all events (${EventNames.join(", ")}).`,
        expected: "an array of event names"
      })
  ),
  timeout_ms: withDefault(
    5000,
    Millis(1).annotate({
      description:
        "How long one reply may take, in milliseconds, counted from the write. A late reply kills the extension.",
      expected: `a positive integer${ms}`
    })
  ),
  startup_timeout_ms: withDefault(
    10000,
    Millis(1).annotate({
      description: "Timeout of the first exchange (session_start), in milliseconds.",
      expected: `a positive integer${ms}`
    })
  ),
  grace_ms: withDefault(
    1000,
    Millis(0).annotate({
      description:
        "At shutdown: time between closing stdin and SIGTERM, and between SIGTERM and SIGKILL, in milliseconds.",
      expected: `a non-negative integer${ms}`
    })
  ),
  on_failure: withDefault(
    "ignore",
    Schema.Literals(OnFailureValues).annotate({
      description:
        "What a dead extension means for tool calls: ignore (skip it), ask (ask for approval) or deny (block). For tool results, ask and deny withhold the content."
    })
  ),
  cwd: orUndefined(
    PathString(
      "a folder relative to the config file's folder, or leave cwd out for that folder",
      " (a folder, relative to the config file's folder)"
    ).annotate({
      description: "Working directory of the process, relative to this file's folder. Default: this file's folder."
    })
  ),
  env: withDefault(
    {},
    Env.annotate({
      description:
        "Environment variables set for the extension (on top of the baseline: PATH, HOME, USER, LOGNAME, SHELL, TERM, TMPDIR, TZ and the locale variables LANG, LANGUAGE, LC_ALL and the LC_ categories, by name).",
      expected: "an object of string values"
    })
  ),
  env_passthrough: withDefault(
    [],
    Schema.Array(Schema.String.check(envName)).annotate({
      description:
        "Names of the host's environment variables passed to the extension beyond the baseline; `*` matches any run of characters, so \"AWS_*\" passes AWS_SECRET_ACCESS_KEY too: name what the extension needs (a glob that can pass secrets is warned about). Nothing else of the host's environment is passed.",
      expected: "an array of variable names or globs"
    })
  ),
  reply_ids: withDefault(
    "optional",
    Schema.Literals(ReplyIdsValues).annotate({
      description:
        "required: every reply must echo the request's id (a reply without it is malformed), and the host writes each request at once instead of first letting the event loop read what is already in the pipe. optional: a reply may echo it. A reply with a wrong id kills the extension either way. Set required for extensions that always echo (the SDK, abhed-ext hook)."
    })
  ),
  match: orUndefined(
    Rules.check(nonEmptyMatch).annotate({
      description:
        "Only tool calls matching one of these rules (same shape as policy rules) are sent to this extension (tool_call and tool_result), re-checked on every settling round. Omitted = every call; an empty list is an error (it would match no call)."
    })
  ),
  // Left out, not defaulted, when absent: an extension's definition (its digest, which trust and reload compare) is
  // what it was before the key existed.
  protocol: orUndefined(
    Schema.Literals(ProtocolValues).annotate({
      description:
        "What the command speaks on stdin/stdout. abhed (when left out): this line protocol. mcp: it is an MCP server (stdio), which the host starts and calls as an MCP client; its tools are offered as mcp__NAME__TOOL (NAME: this extension's name) and it answers list_tools and invoke_tool only, so its events default to those two and may name no other."
    })
  )
})
  .annotate({
    description: "One extension: a process speaking line-delimited JSON on stdin/stdout (or MCP: protocol)."
  })
  .check(mcpExtension)
/** As written in the file. */
export type ExtensionFile = typeof ExtensionFile.Encoded

const RulesAt = (level: string) =>
  withDefault(
    [],
    Rules.annotate({
      description: `Calls matching any of these rules are ${level}.`
    })
  )

const PolicyKeys = ["deny", "ask", "allow", "default"]

export const PolicyFile = Schema.Struct({
  deny: RulesAt("denied"),
  ask: RulesAt("asked (need approval), unless a deny rule matches"),
  allow: RulesAt("allowed, unless a deny or ask rule matches"),
  default: withDefault(
    "allow",
    Schema.Literals(["allow", "ask", "deny"]).annotate({
      description: "The decision when no rule matches."
    })
  )
}).annotate({
  description:
    "The operator's policy. It runs on the settled arguments; the final decision is the stricter of the policy's and the extensions'.",
  expected: `an object with ${PolicyKeys.join(", ")}`
})
/** As written in the file. */
export type PolicyFile = typeof PolicyFile.Encoded

// Names order the combination of replies and attribute every reason, so two extensions may not share one.
// (JSON Schema cannot say this; the effect Schema does, once every extension is otherwise valid.)
const uniqueNames = unique<typeof ExtensionFile.Type>({
  noun: "name",
  keyOf: (x) => x.name,
  at: ["name"],
  fix: "names must be unique"
}).annotate({ toJsonSchema: () => ({}) })

export const ConfigFile = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String.annotate({ description: "The JSON Schema of this file, for editors." })),
  extensions: withDefault(
    [],
    Schema.Array(ExtensionFile).check(uniqueNames).annotate({
      description: "The extensions to run. Names must be unique.",
      expected: "an array of extensions"
    })
  ),
  // Left out, the policy is the empty one: no rules, default allow.
  policy: Schema.withDecodingDefaultTypeKey<typeof PolicyFile>(Effect.succeed(Schema.decodeSync(PolicyFile)({})))(
    PolicyFile
  ),
  max_rewrite_rounds: withDefault(
    4,
    PositiveInt.annotate({
      description: "How many rounds of argument/content rewrites may run before the call fails closed.",
      expected: "a positive integer"
    })
  ),
  builtin_tools: withDefault(
    [],
    Schema.Array(Schema.NonEmptyString.check(builtinToolName).annotate({ expected: "a non-empty string" }))
      .check(uniqueItems("tool"))
      .annotate({
        description:
          "The agent's own tool names (letters, digits, '_' and '-', 1 to 64 characters); an extension tool with one of these names is rejected.",
        expected: "an array of tool names"
      })
  ),
  // Optional, not defaulted: a Config made in code need not say it (absent reads as false).
  allow_managed_only: Schema.optionalKey(
    Schema.Boolean.annotate({
      description:
        "In the managed config only (absent: false): run the managed extensions alone, ignoring the user's and the project's (each ignored one is warned about). Elsewhere it has no effect.",
      expected: "true or false"
    })
  )
}).annotate({
  title: "abhed.json",
  description: "Configuration of Abhed's extension host.",
  expected: `a JSON object like {"extensions": [...]}`
})
/** As written in the file. */
export type ConfigFile = typeof ConfigFile.Encoded

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
