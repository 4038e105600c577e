import { Result } from "effect"
import {
  extensionConfig,
  type Config,
  Defaults,
  type ExtensionConfig,
  OnFailureValues,
  type PolicyConfig,
  ReplyIdsValues,
  type PolicyLevel,
  type PolicyRule
} from "./Config.ts"
import { ConfigError, type ConfigIssue } from "./ConfigError.ts"
import { EnvNamePattern, ExtensionNamePattern, ReservedExtensionNames } from "./ConfigSchema.ts"
import { type EventName, EventNames, isEventName } from "./Event.ts"
import { isJsonObject, type JsonObject } from "./Json.ts"

/**
 * Decoding `abhed.json` (DESIGN §5) into the defaulted `Config`.
 *
 * Why a hand-written walk and not `Schema.decodeUnknown(ConfigFile)`: the messages must name the path AND the fix
 * (`unknown event "tool_calls"; expected one of …`, `did you mean "timeout_ms"?`), and every problem in the file
 * must be reported at once, in document order. `ConfigFile` (the effect Schema) stays the source of the JSON
 * Schema for editors; a property test checks both accept exactly the same files.
 */

/** Decode an already-parsed `abhed.json` value. Fails with every problem found. */
export const decodeConfig = (input: unknown): Result.Result<Config, ConfigError> => {
  const issues: Array<ConfigIssue> = []
  const config = walkConfig(input, issues)
  return config === undefined || issues.length > 0
    ? Result.fail(new ConfigError({ issues }))
    : Result.succeed(config)
}

/** Parse and decode `abhed.json` text. A JSON syntax error is a `ConfigError` too. A leading BOM is skipped. */
export const parseConfig = (text: string): Result.Result<Config, ConfigError> => {
  let input: unknown
  try {
    input = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
  } catch (cause) {
    // V8 quotes the offending text, newlines included: keep the message on one line.
    const detail = (cause instanceof Error ? cause.message : String(cause)).replace(/\s*\n\s*/g, " ")
    return Result.fail(new ConfigError({ issues: [{ path: "", message: `invalid JSON: ${detail}` }] }))
  }
  return decodeConfig(input)
}

// ---------------------------------------------------------------------------------------------------------------
// Reporting

type Issues = Array<ConfigIssue>

/** A short rendering of an offending value for messages. */
const show = (u: unknown): string => {
  if (u === undefined) return "nothing"
  if (Array.isArray(u)) return "an array"
  if (isJsonObject(u)) return "an object"
  const text = JSON.stringify(u) ?? String(u)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

const key = (path: string, name: string): string =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)
    ? (path === "" ? name : `${path}.${name}`)
    : `${path}[${JSON.stringify(name)}]`

const oneOf = (values: ReadonlyArray<string>): string => values.join(", ")

/** Levenshtein distance, for "did you mean" hints on short identifiers. */
const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

/** The closest candidate, if it is close enough to be a plausible typo (or the input is a prefix of it). */
export const closestName = (input: string, candidates: ReadonlyArray<string>): string | undefined => {
  const lower = input.toLowerCase()
  let best: { readonly candidate: string; readonly score: number } | undefined
  for (const candidate of candidates) {
    const d = distance(lower, candidate.toLowerCase())
    const prefix = lower.length >= 3 && (candidate.startsWith(lower) || lower.startsWith(candidate))
    const close = d <= Math.max(1, Math.floor(candidate.length / 3))
    if ((close || prefix) && (best === undefined || d < best.score)) best = { candidate, score: d }
  }
  return best?.candidate
}

const didYouMean = (input: string, candidates: ReadonlyArray<string>): string => {
  const hint = closestName(input, candidates)
  return hint === undefined ? "" : `; did you mean "${hint}"?`
}

// ---------------------------------------------------------------------------------------------------------------
// Field checks: each returns the value when valid, or undefined after recording an issue.

const positiveInt = (issues: Issues, path: string, u: unknown, unit: string): number | undefined => {
  if (typeof u === "number" && Number.isSafeInteger(u) && u > 0) return u
  issues.push({ path, message: `must be a positive integer${unit}, got ${show(u)}` })
  return undefined
}

const nonNegativeInt = (issues: Issues, path: string, u: unknown, unit: string): number | undefined => {
  if (typeof u === "number" && Number.isSafeInteger(u) && u >= 0) return u
  issues.push({ path, message: `must be a non-negative integer${unit}, got ${show(u)}` })
  return undefined
}

const string = (issues: Issues, path: string, u: unknown, what = "a string"): string | undefined => {
  if (typeof u === "string") return u
  issues.push({ path, message: `must be ${what}, got ${show(u)}` })
  return undefined
}

const nonEmptyString = (issues: Issues, path: string, u: unknown, what = ""): string | undefined => {
  if (typeof u === "string" && u.length > 0) return u
  issues.push({
    path,
    message: typeof u === "string"
      ? `must be a non-empty string${what}`
      : `must be a non-empty string${what}, got ${show(u)}`
  })
  return undefined
}

const literal = <A extends string>(
  issues: Issues,
  path: string,
  u: unknown,
  values: ReadonlyArray<A>
): A | undefined => {
  const found = values.find((v) => v === u)
  if (found !== undefined) return found
  const hint = typeof u === "string" ? didYouMean(u, values) : ""
  issues.push({ path, message: `unknown value ${show(u)}; expected one of ${oneOf(values)}${hint}` })
  return undefined
}

const array = (issues: Issues, path: string, u: unknown, what: string): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(u)) return u
  issues.push({ path, message: `must be an array of ${what}, got ${show(u)}` })
  return undefined
}

const object = (issues: Issues, path: string, u: unknown, what: string): JsonObject | undefined => {
  if (isJsonObject(u)) return u
  issues.push({ path, message: `must be ${what}, got ${show(u)}` })
  return undefined
}

/** An object of string values (`env`, rule `args`). Keys are checked by `validKey`, if given. */
const stringMap = (
  issues: Issues,
  path: string,
  u: unknown,
  what: string,
  validKey?: (name: string) => string | undefined
): { readonly [key: string]: string } | undefined => {
  const o = object(issues, path, u, `an object of ${what}`)
  if (o === undefined) return undefined
  const entries: Array<[string, string]> = []
  for (const name of Object.keys(o)) {
    const problem = validKey?.(name)
    if (problem !== undefined) issues.push({ path: key(path, name), message: problem })
    const value = string(issues, key(path, name), o[name])
    if (value !== undefined) entries.push([name, value])
  }
  // fromEntries defines own data properties, so a "__proto__" key stays a plain key.
  return Object.fromEntries(entries)
}

type Checks = { readonly [key: string]: (path: string, value: unknown) => unknown }
type Checked<C extends Checks> = { -readonly [K in keyof C]?: ReturnType<C[K]> }

/**
 * Walk an object's keys in document order: known keys go to their check, unknown keys are issues (with a hint).
 * Returns the checks' results by key (absent = the key was absent).
 */
const fields = <C extends Checks>(issues: Issues, path: string, o: JsonObject, checks: C): Checked<C> => {
  const known = Object.keys(checks)
  const out: Record<string, unknown> = {}
  for (const name of Object.keys(o)) {
    const check = Object.hasOwn(checks, name) ? checks[name] : undefined
    if (check === undefined) {
      const hint = closestName(name, known)
      issues.push({
        path: key(path, name),
        message: hint === undefined
          ? `unknown key; expected one of ${oneOf(known)}`
          : `unknown key; did you mean "${hint}"?`
      })
      continue
    }
    out[name] = check(key(path, name), o[name])
  }
  // Each present key K holds the result of checks[K], which is exactly what Checked<C> describes.
  return out as Checked<C>
}

// ---------------------------------------------------------------------------------------------------------------
// The file

const PolicyKeys = ["deny", "ask", "allow", "default"] as const
const PolicyLevels: ReadonlyArray<PolicyLevel> = ["allow", "ask", "deny"]

const walkConfig = (input: unknown, issues: Issues): Config | undefined => {
  const root = isJsonObject(input) ? input : undefined
  if (root === undefined) {
    issues.push({
      path: "",
      message: `the config must be a JSON object like {"extensions": [...]}, got ${show(input)}`
    })
    return undefined
  }
  const got = fields(issues, "", root, {
    $schema: (path, u) => string(issues, path, u),
    extensions: (path, u) => walkExtensions(issues, path, u),
    policy: (path, u) => walkPolicy(issues, path, u),
    max_rewrite_rounds: (path, u) => positiveInt(issues, path, u, ""),
    builtin_tools: (path, u) => uniqueStrings(issues, path, u, "tool names", "tool")
  })
  return {
    extensions: got.extensions ?? [],
    policy: got.policy ?? Defaults.policy,
    max_rewrite_rounds: got.max_rewrite_rounds ?? Defaults.max_rewrite_rounds,
    builtin_tools: got.builtin_tools ?? Defaults.builtin_tools
  }
}

const uniqueStrings = (
  issues: Issues,
  path: string,
  u: unknown,
  what: string,
  noun: string
): ReadonlyArray<string> | undefined => {
  const items = array(issues, path, u, what)
  if (items === undefined) return undefined
  const out: Array<string> = []
  const seen = new Map<string, number>()
  items.forEach((item, i) => {
    const at = `${path}[${i}]`
    const value = nonEmptyString(issues, at, item)
    if (value === undefined) return
    const first = seen.get(value)
    if (first !== undefined) {
      issues.push({ path: at, message: `duplicate ${noun} "${value}" (also ${path}[${first}])` })
      return
    }
    seen.set(value, i)
    out.push(value)
  })
  return out
}

const walkExtensions = (issues: Issues, path: string, u: unknown): ReadonlyArray<ExtensionConfig> | undefined => {
  const items = array(issues, path, u, "extensions")
  if (items === undefined) return undefined
  const names = new Map<string, number>()
  const out: Array<ExtensionConfig> = []
  items.forEach((item, i) => {
    const extension = walkExtension(issues, `${path}[${i}]`, item, names, i)
    if (extension !== undefined) out.push(extension)
  })
  return out
}

const walkName = (issues: Issues, path: string, u: unknown, names: Map<string, number>, index: number) => {
  const name = nonEmptyString(issues, path, u, " (the extension's unique name)")
  if (name === undefined) return undefined
  if (ReservedExtensionNames.includes(name)) {
    issues.push({
      path,
      message: `the name "${name}" is reserved (decisions name the policy engine "${name}"); choose another name`
    })
    return undefined
  }
  if (!ExtensionNamePattern.test(name)) {
    issues.push({
      path,
      message: `invalid name ${
        JSON.stringify(name)
      }; use letters, digits, ".", "_" and "-", starting with a letter or digit`
    })
    return undefined
  }
  const first = names.get(name)
  if (first !== undefined) {
    issues.push({
      path,
      message: `duplicate name "${name}" (also extensions[${first}]); names must be unique`
    })
    return undefined
  }
  names.set(name, index)
  return name
}

const walkEvents = (issues: Issues, path: string, u: unknown): ReadonlyArray<EventName> | undefined => {
  const items = array(issues, path, u, "event names")
  if (items === undefined) return undefined
  const out: Array<EventName> = []
  const seen = new Map<EventName, number>()
  items.forEach((item, i) => {
    const at = `${path}[${i}]`
    if (!isEventName(item)) {
      issues.push({
        path: at,
        message: typeof item === "string"
          ? `unknown event ${JSON.stringify(item)}; expected one of ${oneOf(EventNames)}${didYouMean(item, EventNames)}`
          : `must be an event name (one of ${oneOf(EventNames)}), got ${show(item)}`
      })
      return
    }
    const first = seen.get(item)
    if (first !== undefined) {
      issues.push({ path: at, message: `duplicate event "${item}" (also ${path}[${first}])` })
      return
    }
    seen.set(item, i)
    out.push(item)
  })
  return out
}

const envName = (name: string): string | undefined =>
  EnvNamePattern.test(name)
    ? undefined
    : `invalid variable name ${JSON.stringify(name)}; names must be non-empty and contain no "=" or NUL`

const walkExtension = (
  issues: Issues,
  path: string,
  u: unknown,
  names: Map<string, number>,
  index: number
): ExtensionConfig | undefined => {
  const o = object(issues, path, u, `an extension object like {"name": "guard", "command": "bash"}`)
  if (o === undefined) return undefined
  const before = issues.length
  const ms = " (milliseconds)"
  const got = fields(issues, path, o, {
    name: (p, v) => walkName(issues, p, v, names, index),
    command: (p, v) => nonEmptyString(issues, p, v),
    args: (p, v) => {
      const items = array(issues, p, v, "strings")
      if (items === undefined) return undefined
      const out: Array<string> = []
      items.forEach((item, i) => {
        const s = string(issues, `${p}[${i}]`, item)
        if (s !== undefined) out.push(s)
      })
      return out
    },
    events: (p, v) => walkEvents(issues, p, v),
    timeout_ms: (p, v) => positiveInt(issues, p, v, ms),
    startup_timeout_ms: (p, v) => positiveInt(issues, p, v, ms),
    grace_ms: (p, v) => nonNegativeInt(issues, p, v, ms),
    on_failure: (p, v) => literal(issues, p, v, OnFailureValues),
    cwd: (p, v) => nonEmptyString(issues, p, v, " (a folder, relative to the config file's folder)"),
    env: (p, v) => stringMap(issues, p, v, "string values", envName),
    env_passthrough: (p, v) => {
      const items = array(issues, p, v, "variable names or globs")
      if (items === undefined) return undefined
      const out: Array<string> = []
      items.forEach((item, i) => {
        const s = string(issues, `${p}[${i}]`, item)
        if (s === undefined) return
        const problem = envName(s)
        if (problem !== undefined) issues.push({ path: `${p}[${i}]`, message: problem })
        else out.push(s)
      })
      return out
    },
    reply_ids: (p, v) => literal(issues, p, v, ReplyIdsValues),
    match: (p, v) => walkRules(issues, p, v)
  })
  if (!Object.hasOwn(o, "name")) {
    issues.push({ path: key(path, "name"), message: "missing; every extension needs a unique name" })
  }
  if (!Object.hasOwn(o, "command")) {
    issues.push({ path: key(path, "command"), message: "missing; the program to run, e.g. \"bash\"" })
  }
  if (issues.length > before || got.name === undefined || got.command === undefined) return undefined
  return extensionConfig({ ...got, name: got.name, command: got.command })
}

const walkPolicy = (issues: Issues, path: string, u: unknown): PolicyConfig | undefined => {
  const o = object(issues, path, u, `an object with ${oneOf(PolicyKeys)}`)
  if (o === undefined) return undefined
  const rules = (p: string, v: unknown) => walkRules(issues, p, v)
  const got = fields(issues, path, o, {
    deny: rules,
    ask: rules,
    allow: rules,
    default: (p, v) => literal(issues, p, v, PolicyLevels)
  })
  return {
    deny: got.deny ?? [],
    ask: got.ask ?? [],
    allow: got.allow ?? [],
    default: got.default ?? Defaults.policy.default
  }
}

const walkRules = (issues: Issues, path: string, u: unknown): ReadonlyArray<PolicyRule> | undefined => {
  const items = array(issues, path, u, "rules")
  if (items === undefined) return undefined
  const out: Array<PolicyRule> = []
  items.forEach((item, i) => {
    const rule = walkRule(issues, `${path}[${i}]`, item)
    if (rule !== undefined) out.push(rule)
  })
  return out
}

const walkRule = (issues: Issues, path: string, u: unknown): PolicyRule | undefined => {
  const o = object(issues, path, u, `a rule object like {"tool": "bash", "args": {"command": "rm -rf *"}}`)
  if (o === undefined) return undefined
  const before = issues.length
  const got = fields(issues, path, o, {
    tool: (p, v) => nonEmptyString(issues, p, v, " (a tool name glob)"),
    args: (p, v) => stringMap(issues, p, v, "glob strings"),
    reason: (p, v) => string(issues, p, v)
  })
  if (!Object.hasOwn(o, "tool")) {
    issues.push({ path: key(path, "tool"), message: "missing; the tool name (a glob) this rule matches" })
  }
  if (issues.length > before || got.tool === undefined) return undefined
  return { tool: got.tool, args: got.args ?? {}, reason: got.reason }
}
