import { Effect, Schema, SchemaIssue } from "effect"
import { EventName, EventNames } from "./Event.ts"
import { ToolNamePattern, ToolNameRule } from "./Tool.ts"

/**
 * The `abhed.json` file format as an effect Schema (docs/design.md#configuration): the one statement of the config. It describes the
 * file as written (every key optional but `name` and `command`) on its encoded side. `decodeConfig` decodes with it and words its issues for people
 * (ConfigIssues.ts); editors validate against the JSON Schema generated from it (`docs/abhed.schema.json`).
 *
 * A key that may be left out carries its default (`withDefault`): the decoded type is the defaulted `Config` (Config.ts),
 * and the same value is the JSON Schema's `default`.
 *
 * The annotations the messages are made of: `expected` (what a value must be: "must be {expected}, got …"),
 * `noun` (what a list of literals holds: `unknown event "x"; expected one of …`), `messageMissingKey`, and the
 * messages the filters below return.
 */

/**
 * Extension names: a portable, shell-safe identifier. Reasons name their source by extension name, and two sources
 * are not extensions: "policy" (the policy engine) and "host" (the host's own fail-closed reasons, e.g. input nested
 * too deep): an extension may not take either name in any case (`Policy`, `HOST`), or its reasons could pass for
 * theirs.
 */
export const ExtensionNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/u
export const ReservedExtensionNames: ReadonlyArray<string> = ["policy", "host"]
export const isReservedExtensionName = (name: string): boolean => ReservedExtensionNames.includes(name.toLowerCase())
// Any case, spelled out per letter (`[pP][oO]…`): JSON Schema's regexes have no flag for it.
const anyCase = (word: string) => [...word].map((c) => `[${c.toLowerCase()}${c.toUpperCase()}]`).join("")
// The `u` flag is what lets effect export a pattern to JSON Schema (whose regexes are Unicode-aware).
const ExtensionNameRule = new RegExp(
  `^(?!(?:${ReservedExtensionNames.map(anyCase).join("|")})$)${ExtensionNamePattern.source.slice(1)}`,
  "u"
)

/** Environment variable names: what `execve` accepts (non-empty, no "=", no NUL). */
export const EnvNamePattern = /^[^=\u0000]+$/u

/** A check exported to JSON Schema as `pattern`, whose failure message `message(input)` is computed. */
const pattern = (regExp: RegExp, message: (input: string) => string | false) =>
  Schema.makeFilter<string>((s) => regExp.test(s) || message(s), { toJsonSchema: () => ({ pattern: regExp.source }) })

const extensionName = pattern(ExtensionNameRule, (name) =>
  name === ""
    ? false // "must be a non-empty string (…)"
    : isReservedExtensionName(name)
    ? `the name ${JSON.stringify(name)} is reserved in any case (decisions name ${
      name.toLowerCase() === "policy" ? "the policy engine \"policy\"" : "the host's own reasons \"host\""
    }); choose another name`
    : `invalid name ${JSON.stringify(name)}; use letters, digits, ".", "_" and "-", starting with a letter or digit`)

const envName = pattern(
  EnvNamePattern,
  (name) => `invalid variable name ${JSON.stringify(name)}; names must be non-empty and contain no "=" or NUL`
)

/**
 * No two items alike (by `keyOf`): each repeat is reported at its own index (plus `at`), with `duplicateOf`
 * naming the first, which the formatter renders as a path (`duplicate event "x" (also extensions[0].events[0])`).
 */
const unique = <A>(options: {
  readonly noun: string
  readonly keyOf: (item: A) => unknown
  readonly at?: ReadonlyArray<PropertyKey>
  readonly fix?: string
}) =>
  Schema.makeFilter<ReadonlyArray<A>>((items) => {
    const first = new Map<unknown, number>()
    return items.flatMap((item, i) => {
      const key = options.keyOf(item)
      const seen = first.get(key)
      if (seen === undefined) {
        first.set(key, i)
        return []
      }
      const message = `duplicate ${options.noun} ${JSON.stringify(key)}`
      return [{
        path: [i, ...(options.at ?? [])],
        issue: new SchemaIssue.InvalidValue({ message, duplicateOf: [seen], fix: options.fix }, item)
      }]
    })
  })

/** Items unique by value, exported to JSON Schema as `uniqueItems`. */
const uniqueItems = <A>(noun: string) =>
  unique<A>({ noun, keyOf: (item) => item }).annotate({ toJsonSchema: () => ({ uniqueItems: true }) })

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER))

/**
 * The longest a timer can wait: Node's setTimeout takes a signed 32-bit delay, and a longer one fires after 1 ms
 * (a grace_ms of 3000000000 would SIGTERM the extension at once). About 24.8 days.
 */
export const MaxTimerMs = 2_147_483_647
const atMostMaxTimer = Schema.makeFilter<number>(
  (n) =>
    n <= MaxTimerMs ||
    // A value that is not even an integer (1e300, Infinity) keeps its one "must be …" message.
    (Number.isSafeInteger(n) && `must be at most ${MaxTimerMs} (about 24.8 days, the longest a timer can wait), got ${n}`),
  { toJsonSchema: () => ({ maximum: MaxTimerMs }) }
)
/** A duration in milliseconds: an integer from `min` (0 or 1) to the longest a timer can wait. */
const Millis = (min: 0 | 1) => Schema.Int.check(Schema.isGreaterThanOrEqualTo(min), atMostMaxTimer)
const ms = " (milliseconds)"

/** Whitespace only: no program, folder or tool has such a name, and spawn would fail with a puzzling ENOENT. */
const blankMessage = (fix: string) => `blank (only whitespace); ${fix}`
/** NUL ends a C string: execve cannot pass it in a path, an argument or an environment value. */
const nulMessage = (what: string) => `contains a NUL character, which no ${what} can carry`

// "" fails these patterns too, but keeps its one message ("must be a non-empty string"): `false` is that message.
const nonBlank = (fix: string) => pattern(/\S/u, (s) => s !== "" && blankMessage(fix))
const noNul = (what: string) => pattern(/^[^\u0000]*$/u, () => nulMessage(what))
// One pattern, not two: two would be exported to JSON Schema as an `allOf` that hides the field's description.
const nonBlankPath = (fix: string) =>
  pattern(
    /^[^\u0000]*[^\s\u0000][^\u0000]*$/u,
    (s) => (s.includes("\u0000") ? nulMessage("file path") : s !== "" && blankMessage(fix))
  )

// `expected` goes on the last check: the one the formatter reads it from (ConfigIssues.ts `mustBe`).
/** A string that names something: non-empty, not blank; `fix` says what it names. */
const NonEmptyString = (fix: string, what = "") =>
  Schema.NonEmptyString.check(nonBlank(fix)).annotate({ expected: `a non-empty string${what}` })
/** A file or folder path: not blank, and no NUL. */
const PathString = (fix: string, what = "") =>
  Schema.NonEmptyString.check(nonBlankPath(fix)).annotate({ expected: `a non-empty string${what}` })

// The agent's own tools go to the model next to the extensions' under the same rule: a name outside it is no tool.
const builtinToolName = pattern(
  new RegExp(ToolNamePattern.source, "u"),
  (name) =>
    name === ""
      ? false // "must be a non-empty string"
      : /^\s+$/u.test(name)
      ? blankMessage("a tool name, e.g. \"bash\"")
      : `invalid tool name ${JSON.stringify(name)}; a tool name has ${ToolNameRule}`
)

const Env = Schema.Record(Schema.String.check(envName), Schema.String.check(noNul("environment value")))
const Globs = Schema.Record(Schema.String, Schema.String)
const oneOf = (values: ReadonlyArray<string>) => `one of ${values.join(", ")}`

/** A key that may be left out and then takes `value`: one statement of the default, for decoding and for the JSON Schema. */
const withDefault = <S extends Schema.Top>(value: S["Type"], schema: S) => {
  const annotated = schema.annotate({ default: value })
  return Schema.withDecodingDefaultTypeKey<typeof annotated>(Effect.succeed(value))(annotated)
}

/**
 * A key that may be left out, decoded as present and `undefined` ("none": no folder of its own, no rules, no reason):
 * the file leaves it out, the decoded config always holds it. The JSON Schema is the schema's own.
 */
const orUndefined = <S extends Schema.Top>(schema: S) =>
  Schema.UndefinedOr(Schema.toType(schema)).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed(undefined)),
    Schema.encodeTo(Schema.optionalKey(schema))
  )

/** What an extension that fails does to the decision (docs/design.md#failures). */
export const OnFailureValues = ["ignore", "ask", "deny"] as const
/** Whether a reply must echo the request's `id` (docs/design.md#wire-protocol). A wrong id is fatal either way. */
export const ReplyIdsValues = ["optional", "required"] as const

export const PolicyRuleFile = Schema.Struct({
  tool: NonEmptyString("the tool name (a glob) this rule matches", " (a tool name glob)").annotate({
    description: "Tool name glob: `*` matches any run of characters (including `/`), `?` one character, `\\` escapes."
  }).annotateKey({ messageMissingKey: "missing; the tool name (a glob) this rule matches" }),
  args: withDefault({}, Globs.annotate({
    description:
      "Globs on named arguments; every one must match (a string argument as-is, any other value as canonical JSON). A missing argument never matches.",
    expected: "an object of glob strings"
  })),
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
  name: Schema.String.check(extensionName).annotate({
    description:
      "Unique name of the extension, used in reasons, audit records and ordering. Letters, digits, '.', '_', '-', starting with a letter or digit; \"policy\" and \"host\" are reserved, in any case.",
    expected: "a non-empty string (the extension's unique name)"
  }).annotateKey({ messageMissingKey: "missing; every extension needs a unique name" }),
  command: PathString("the program to run, e.g. \"bash\"").annotate({
    description:
      "The program to run: looked up on PATH when it has no '/', else a path relative to the extension's working directory (cwd)."
  }).annotateKey({ messageMissingKey: "missing; the program to run, e.g. \"bash\"" }),
  args: withDefault(
    [],
    Schema.Array(Schema.String.check(noNul("program argument"))).annotate({
      description: "Arguments passed to the command.",
      expected: "an array of strings"
    })
  ),
  events: withDefault(
    [],
    Schema.Array(EventName.annotate({ noun: "event", expected: `an event name (${oneOf(EventNames)})` })).check(
      uniqueItems("event")
    ).annotate({
      description: `The events this extension receives. Omitted or empty = all events (${EventNames.join(", ")}).`,
      expected: "an array of event names"
    })
  ),
  timeout_ms: withDefault(5000, Millis(1).annotate({
    description: "How long one reply may take, in milliseconds, counted from the write. A late reply kills the extension.",
    expected: `a positive integer${ms}`
  })),
  startup_timeout_ms: withDefault(10000, Millis(1).annotate({
    description: "Timeout of the first exchange (session_start), in milliseconds.",
    expected: `a positive integer${ms}`
  })),
  grace_ms: withDefault(1000, Millis(0).annotate({
    description: "At shutdown: time between closing stdin and SIGTERM, and between SIGTERM and SIGKILL, in milliseconds.",
    expected: `a non-negative integer${ms}`
  })),
  on_failure: withDefault("ignore", Schema.Literals(OnFailureValues).annotate({
    description:
      "What a dead extension means for tool calls: ignore (skip it), ask (ask for approval) or deny (block). For tool results, ask and deny withhold the content."
  })),
  cwd: orUndefined(
    PathString(
      "a folder relative to the config file's folder, or leave cwd out for that folder",
      " (a folder, relative to the config file's folder)"
    ).annotate({
      description: "Working directory of the process, relative to this file's folder. Default: this file's folder."
    })
  ),
  env: withDefault({}, Env.annotate({
    description:
      "Environment variables set for the extension (on top of the baseline: PATH, HOME, USER, LOGNAME, SHELL, TERM, TMPDIR, TZ and the locale variables LANG, LANGUAGE, LC_ALL and the LC_ categories, by name).",
    expected: "an object of string values"
  })),
  env_passthrough: withDefault(
    [],
    Schema.Array(Schema.String.check(envName)).annotate({
      description:
        "Names of the host's environment variables passed to the extension beyond the baseline; `*` matches any run of characters, so \"AWS_*\" passes AWS_SECRET_ACCESS_KEY too: name what the extension needs (a glob that can pass secrets is warned about). Nothing else of the host's environment is passed.",
      expected: "an array of variable names or globs"
    })
  ),
  reply_ids: withDefault("optional", Schema.Literals(ReplyIdsValues).annotate({
    description:
      "required: every reply must echo the request's id (a reply without it is malformed), and the host writes each request at once instead of first letting the event loop read what is already in the pipe. optional: a reply may echo it. A reply with a wrong id kills the extension either way. Set required for extensions that always echo (the SDK, abhed-ext hook)."
  })),
  match: orUndefined(Rules.check(nonEmptyMatch).annotate({
    description:
      "Only tool calls matching one of these rules (same shape as policy rules) are sent to this extension (tool_call and tool_result), re-checked on every settling round. Omitted = every call; an empty list is an error (it would match no call)."
  }))
}).annotate({
  identifier: "Extension",
  description: "One extension: a process speaking line-delimited JSON on stdin/stdout.",
  expected: `an extension object like {"name": "guard", "command": "bash"}`
})
/** As written in the file. */
export type ExtensionFile = typeof ExtensionFile.Encoded

const RulesAt = (level: string) =>
  withDefault([], Rules.annotate({
    description: `Calls matching any of these rules are ${level}.`
  }))

const PolicyKeys = ["deny", "ask", "allow", "default"]

export const PolicyFile = Schema.Struct({
  deny: RulesAt("denied"),
  ask: RulesAt("asked (need approval), unless a deny rule matches"),
  allow: RulesAt("allowed, unless a deny or ask rule matches"),
  default: withDefault("allow", Schema.Literals(["allow", "ask", "deny"]).annotate({
    description: "The decision when no rule matches."
  }))
}).annotate({
  description:
    "The operator's policy. It runs on the settled arguments; the final decision is the stricter of the policy's and the extensions'.",
  expected: `an object with ${PolicyKeys.join(", ")}`
})
/** As written in the file. */
export type PolicyFile = typeof PolicyFile.Encoded

// Names order the combination of replies and attribute every reason, so two extensions may not share one.
// (JSON Schema cannot say this; the effect Schema does, once every extension is otherwise valid.)
const uniqueNames = unique<typeof ExtensionFile.Type>({ noun: "name", keyOf: (x) => x.name, at: ["name"], fix: "names must be unique" })
  .annotate({ toJsonSchema: () => ({}) })

export const ConfigFile = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String.annotate({ description: "The JSON Schema of this file, for editors." })),
  extensions: withDefault([], Schema.Array(ExtensionFile).check(uniqueNames).annotate({
    description: "The extensions to run. Names must be unique.",
    expected: "an array of extensions"
  })),
  // Left out, the policy is the empty one: no rules, default allow.
  policy: Schema.withDecodingDefaultTypeKey<typeof PolicyFile>(Effect.succeed(Schema.decodeSync(PolicyFile)({})))(PolicyFile),
  max_rewrite_rounds: withDefault(4, PositiveInt.annotate({
    description: "How many rounds of argument/content rewrites may run before the call fails closed.",
    expected: "a positive integer"
  })),
  builtin_tools: withDefault([], Schema.Array(
    Schema.NonEmptyString.check(builtinToolName).annotate({ expected: "a non-empty string" })
  ).check(uniqueItems("tool")).annotate({
    description:
      "The agent's own tool names (letters, digits, '_' and '-', 1 to 64 characters); an extension tool with one of these names is rejected.",
    expected: "an array of tool names"
  })),
  // Optional, not defaulted: a Config made in code need not say it (absent reads as false).
  allow_managed_only: Schema.optionalKey(Schema.Boolean.annotate({
    description:
      "In the managed config only (absent: false): run the managed extensions alone, ignoring the user's and the project's (each ignored one is warned about). Elsewhere it has no effect.",
    expected: "true or false"
  }))
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
