import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { ToolNamePattern, ToolNameRule } from "./Tool.ts"

/**
 * The rules a config value is checked by, each with its message for people and its JSON Schema keyword (a
 * `pattern`, `maximum`, `uniqueItems`, ...): names, paths, durations, uniqueness, and the two ways a key may be left
 * out (`withDefault`, `orUndefined`). The config's shape, made of them, is ConfigSchema.ts.
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

export const extensionName = pattern(ExtensionNameRule, (name) =>
  name === ""
    ? false // "must be a non-empty string (…)"
    : isReservedExtensionName(name)
      ? `the name ${JSON.stringify(name)} is reserved in any case (decisions name ${
          name.toLowerCase() === "policy" ? 'the policy engine "policy"' : 'the host\'s own reasons "host"'
        }); choose another name`
      : `invalid name ${JSON.stringify(name)}; use letters, digits, ".", "_" and "-", starting with a letter or digit`
)

export const envName = pattern(
  EnvNamePattern,
  (name) => `invalid variable name ${JSON.stringify(name)}; names must be non-empty and contain no "=" or NUL`
)

/**
 * No two items alike (by `keyOf`): each repeat is reported at its own index (plus `at`), with `duplicateOf`
 * naming the first, which the formatter renders as a path (`duplicate event "x" (also extensions[0].events[0])`).
 */
export const unique = <A>(options: {
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
      return [
        {
          path: [i, ...(options.at ?? [])],
          issue: new SchemaIssue.InvalidValue({ message, duplicateOf: [seen], fix: options.fix }, item)
        }
      ]
    })
  })

/** Items unique by value, exported to JSON Schema as `uniqueItems`. */
export const uniqueItems = <A>(noun: string) =>
  unique<A>({ noun, keyOf: (item) => item }).annotate({ toJsonSchema: () => ({ uniqueItems: true }) })

export const PositiveInt = Schema.Int.check(
  Schema.isGreaterThan(0),
  Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER)
)

/**
 * The longest a timer can wait: Node's setTimeout takes a signed 32-bit delay, and a longer one fires after 1 ms
 * (a grace_ms of 3000000000 would SIGTERM the extension at once). About 24.8 days.
 */
export const MaxTimerMs = 2_147_483_647
const atMostMaxTimer = Schema.makeFilter<number>(
  (n) =>
    n <= MaxTimerMs ||
    // A value that is not even an integer (1e300, Infinity) keeps its one "must be …" message.
    (Number.isSafeInteger(n) &&
      `must be at most ${MaxTimerMs} (about 24.8 days, the longest a timer can wait), got ${n}`),
  { toJsonSchema: () => ({ maximum: MaxTimerMs }) }
)
/** A duration in milliseconds: an integer from `min` (0 or 1) to the longest a timer can wait. */
export const Millis = (min: 0 | 1) => Schema.Int.check(Schema.isGreaterThanOrEqualTo(min), atMostMaxTimer)
export const ms = " (milliseconds)"

/** Whitespace only: no program, folder or tool has such a name, and spawn would fail with a puzzling ENOENT. */
const blankMessage = (fix: string) => `blank (only whitespace); ${fix}`
/** NUL ends a C string: execve cannot pass it in a path, an argument or an environment value. */
const nulMessage = (what: string) => `contains a NUL character, which no ${what} can carry`

// "" fails these patterns too, but keeps its one message ("must be a non-empty string"): `false` is that message.
const nonBlank = (fix: string) => pattern(/\S/u, (s) => s !== "" && blankMessage(fix))
export const noNul = (what: string) => pattern(/^[^\u0000]*$/u, () => nulMessage(what))
// One pattern, not two: two would be exported to JSON Schema as an `allOf` that hides the field's description.
const nonBlankPath = (fix: string) =>
  pattern(/^[^\u0000]*[^\s\u0000][^\u0000]*$/u, (s) =>
    s.includes("\u0000") ? nulMessage("file path") : s !== "" && blankMessage(fix)
  )

// `expected` goes on the last check: the one the formatter reads it from (ConfigIssues.ts `mustBe`).
/** A string that names something: non-empty, not blank; `fix` says what it names. */
export const NonEmptyString = (fix: string, what = "") =>
  Schema.NonEmptyString.check(nonBlank(fix)).annotate({ expected: `a non-empty string${what}` })
/** A file or folder path: not blank, and no NUL. */
export const PathString = (fix: string, what = "") =>
  Schema.NonEmptyString.check(nonBlankPath(fix)).annotate({ expected: `a non-empty string${what}` })

// The agent's own tools go to the model next to the extensions' under the same rule: a name outside it is no tool.
export const builtinToolName = pattern(new RegExp(ToolNamePattern.source, "u"), (name) =>
  name === ""
    ? false // "must be a non-empty string"
    : /^\s+$/u.test(name)
      ? blankMessage('a tool name, e.g. "bash"')
      : `invalid tool name ${JSON.stringify(name)}; a tool name has ${ToolNameRule}`
)

export const Env = Schema.Record(Schema.String.check(envName), Schema.String.check(noNul("environment value")))
export const Globs = Schema.Record(Schema.String, Schema.String)
export const oneOf = (values: ReadonlyArray<string>) => `one of ${values.join(", ")}`

/**
 * A key that may be left out and then takes `value`: one statement of the default, for decoding and for the JSON
 * Schema.
 */
export const withDefault = <S extends Schema.Top>(value: S["Type"], schema: S) => {
  const annotated = schema.annotate({ default: value })
  return Schema.withDecodingDefaultTypeKey<typeof annotated>(Effect.succeed(value))(annotated)
}

/**
 * A key that may be left out, decoded as present and `undefined` ("none": no folder of its own, no rules, no reason):
 * the file leaves it out, the decoded config always holds it. The JSON Schema is the schema's own.
 */
export const orUndefined = <S extends Schema.Top>(schema: S) =>
  Schema.UndefinedOr(Schema.toType(schema)).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed(undefined)),
    Schema.encodeTo(Schema.optionalKey(schema))
  )
