import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { configJsonSchema, decodeConfig, parseConfig } from "../src/index.ts"

/**
 * Values the Schema used to accept but no process can use: a blank command, a NUL in what becomes an argument,
 * an environment value or a path, a duration longer than a timer can wait. Each must be a config error naming
 * the path, never a failure at spawn time or a timer that fires at once.
 */

const linesOf = (input: unknown): ReadonlyArray<string> => {
  const r = decodeConfig(input)
  if (Result.isSuccess(r)) throw new Error(`expected a ConfigError, got ${JSON.stringify(r.success)}`)
  return r.failure.message.split("\n")
}
const textLinesOf = (text: string): ReadonlyArray<string> => {
  const r = parseConfig(text)
  if (Result.isSuccess(r)) throw new Error(`expected a ConfigError, got ${JSON.stringify(r.success)}`)
  return r.failure.message.split("\n")
}
const ext = (fields: Record<string, unknown> = {}) => ({ name: "guard", command: "bash", ...fields })
const extIssue = (fields: Record<string, unknown>) => linesOf({ extensions: [ext(fields)] })
const valid = (input: unknown): boolean => Result.isSuccess(decodeConfig(input))

describe("blank strings where a name or a path is needed", () => {
  it.each([" ", "   ", "\t", "\n", " \u00a0 "])("command %j is blank", (command) => {
    expect(extIssue({ command })).toEqual([
      'extensions[0].command: blank (only whitespace); the program to run, e.g. "bash"'
    ])
  })

  it("cwd, a policy rule's or match rule's tool, and a builtin tool name may not be blank", () => {
    expect(extIssue({ cwd: "  " })).toEqual([
      "extensions[0].cwd: blank (only whitespace); a folder relative to the config file's folder, or leave cwd out for that folder"
    ])
    expect(linesOf({ policy: { deny: [{ tool: " " }] } })).toEqual([
      "policy.deny[0].tool: blank (only whitespace); the tool name (a glob) this rule matches"
    ])
    expect(extIssue({ match: [{ tool: "\t" }] })).toEqual([
      "extensions[0].match[0].tool: blank (only whitespace); the tool name (a glob) this rule matches"
    ])
    expect(linesOf({ builtin_tools: ["bash", " "] })).toEqual([
      'builtin_tools[1]: blank (only whitespace); a tool name, e.g. "bash"'
    ])
  })

  it('the empty string keeps its one message (not also "blank")', () => {
    expect(extIssue({ command: "" })).toEqual(["extensions[0].command: must be a non-empty string"])
    expect(linesOf({ builtin_tools: [""] })).toEqual(["builtin_tools[0]: must be a non-empty string"])
  })

  it("names are already pattern-checked: a blank name is an invalid name", () => {
    expect(extIssue({ name: " " })).toEqual([
      'extensions[0].name: invalid name " "; use letters, digits, ".", "_" and "-", starting with a letter or digit'
    ])
  })

  it("strings where whitespace means something stay as they are", () => {
    expect(valid({ extensions: [ext({ command: " bash", args: [" ", ""], env: { X: " " } })] })).toBe(true)
    expect(valid({ policy: { deny: [{ tool: "bash", args: { command: " " }, reason: " " }] } })).toBe(true)
  })
})

describe("a NUL character, which no argument, environment value or path can carry", () => {
  it("in an argument, an environment value, cwd or command", () => {
    expect(extIssue({ args: ["ok", "a\u0000b"] })).toEqual([
      "extensions[0].args[1]: contains a NUL character, which no program argument can carry"
    ])
    expect(extIssue({ env: { X: "\u0000", Y: "fine" } })).toEqual([
      "extensions[0].env.X: contains a NUL character, which no environment value can carry"
    ])
    expect(extIssue({ cwd: "dir\u0000" })).toEqual([
      "extensions[0].cwd: contains a NUL character, which no file path can carry"
    ])
    expect(extIssue({ command: "bash\u0000" })).toEqual([
      "extensions[0].command: contains a NUL character, which no file path can carry"
    ])
  })

  it("written as \\u0000 in the file, with its line and column", () => {
    expect(textLinesOf('{"extensions": [{"name": "g", "command": "bash",\n "env": {"X": "a\\u0000"}}]}')).toEqual([
      "2:10: extensions[0].env.X: contains a NUL character, which no environment value can carry"
    ])
  })
})

describe("durations no timer can wait", () => {
  const max = 2147483647
  it.each(["timeout_ms", "startup_timeout_ms", "grace_ms"])("%s is at most 2147483647 ms", (key) => {
    expect(valid({ extensions: [ext({ [key]: max })] })).toBe(true)
    expect(extIssue({ [key]: max + 1 })).toEqual([
      `extensions[0].${key}: must be at most 2147483647 (about 24.8 days, the longest a timer can wait), got 2147483648`
    ])
    expect(extIssue({ [key]: 3000000000 })).toEqual([
      `extensions[0].${key}: must be at most 2147483647 (about 24.8 days, the longest a timer can wait), got 3000000000`
    ])
  })

  it("the bound is in the JSON Schema editors use", () => {
    const properties = (configJsonSchema()["$defs"] as { Extension: { properties: Record<string, unknown> } }).Extension
      .properties
    for (const key of ["timeout_ms", "startup_timeout_ms", "grace_ms"]) {
      expect(JSON.stringify(properties[key])).toContain(`"maximum":${max}`)
    }
  })
})

describe("a number too large for a double is shown, not as null", () => {
  it("1e400 is Infinity", () => {
    expect(textLinesOf('{"extensions": [{"name": "g", "command": "bash", "startup_timeout_ms": 1e400}]}')).toEqual([
      "1:50: extensions[0].startup_timeout_ms: must be a positive integer (milliseconds), got Infinity"
    ])
    expect(textLinesOf('{"max_rewrite_rounds": -1e400}')).toEqual([
      "1:2: max_rewrite_rounds: must be a positive integer, got -Infinity"
    ])
  })
})
