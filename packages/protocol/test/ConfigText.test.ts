import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { type ConfigIssue, decodeConfig, parseConfig } from "../src/index.ts"

/** `abhed.json` as text (docs/design.md#configuration, issue 9.2): JSONC, no repeated keys, every problem with its line and column. */

const issuesOf = (text: string): ReadonlyArray<ConfigIssue> => {
  const r = parseConfig(text)
  if (Result.isSuccess(r)) throw new Error(`expected a ConfigError, got ${JSON.stringify(r.success)}`)
  return r.failure.issues
}
const linesOf = (text: string): ReadonlyArray<string> => {
  const r = parseConfig(text)
  if (Result.isSuccess(r)) throw new Error(`expected a ConfigError, got ${JSON.stringify(r.success)}`)
  return r.failure.message.split("\n")
}
const lines = (...ls: ReadonlyArray<string>): string => ls.join("\n")
const repeated = "a repeated key would silently replace the first; keep one"

describe("parseConfig: a key repeated in any object is an error naming both lines", () => {
  it('a second "extensions": [] at the top level does not remove the guards', () => {
    const text = lines(
      "{",
      '  "extensions": [{ "name": "guard", "command": "bash", "args": ["guard.sh"] }],',
      '  "policy": { "deny": [{ "tool": "bash", "args": { "command": "*rm -rf /*" } }] },',
      '  "extensions": []',
      "}"
    )
    expect(linesOf(text)).toEqual([`4:3: extensions: duplicate key "extensions" on lines 2 and 4: ${repeated}`])
  })

  it('a second "policy"', () => {
    const text = lines(
      "{",
      '  "policy": { "deny": [{ "tool": "bash" }] },',
      '  "max_rewrite_rounds": 4,',
      '  "policy": {}',
      "}"
    )
    expect(issuesOf(text)).toEqual([
      {
        path: "policy",
        message: `duplicate key "policy" on lines 2 and 4: ${repeated}`,
        line: 4,
        column: 3
      }
    ])
  })

  it("inside an extension, a rule, a rule's args, and env", () => {
    const text = lines(
      "{",
      '  "extensions": [{',
      '    "name": "guard",',
      '    "command": "bash",',
      '    "env": { "MODE": "strict",',
      '             "MODE": "off" },',
      '    "command": "true"',
      "  }],",
      '  "policy": { "deny": [{ "tool": "bash",',
      '                         "args": { "command": "rm *", "command": "x" },',
      '                         "tool": "read" }] }',
      "}"
    )
    expect(linesOf(text)).toEqual([
      `6:14: extensions[0].env.MODE: duplicate key "MODE" on lines 5 and 6: ${repeated}`,
      `7:5: extensions[0].command: duplicate key "command" on lines 4 and 7: ${repeated}`,
      `10:55: policy.deny[0].args.command: duplicate key "command" twice on line 10: ${repeated}`,
      `11:26: policy.deny[0].tool: duplicate key "tool" on lines 9 and 11: ${repeated}`
    ])
  })

  it("a repeated key is reported with the file's other problems, in document order", () => {
    const text = lines("{", '  "max_rewrite_rounds": 0,', '  "builtin_tools": [],', '  "builtin_tools": [""]', "}")
    expect(linesOf(text)).toEqual([
      "2:3: max_rewrite_rounds: must be a positive integer, got 0",
      `4:3: builtin_tools: duplicate key "builtin_tools" on lines 3 and 4: ${repeated}`,
      "4:21: builtin_tools[0]: must be a non-empty string"
    ])
  })

  it("the same key in different objects is not a repeat", () => {
    const text = '{"extensions": [{"name": "a", "command": "x"}, {"name": "b", "command": "x"}]}'
    expect(Result.isSuccess(parseConfig(text))).toBe(true)
  })
})

describe("parseConfig: JSON with comments", () => {
  it("line and block comments are allowed anywhere whitespace is", () => {
    const text = lines(
      "// the guards of this repository",
      "{",
      '  /* extensions run in name order */ "extensions": [',
      '    { "name": "guard", // blocks secrets',
      '      "command": "bash" }',
      "  ],",
      '  "policy": { "default": /* for now */ "ask" }',
      "}",
      "// end"
    )
    const r = parseConfig(text)
    expect(Result.isSuccess(r) && [r.success.extensions[0]?.name, r.success.policy.default]).toEqual(["guard", "ask"])
  })

  it("a comment-looking string is a string", () => {
    const r = parseConfig('{"policy": {"deny": [{"tool": "bash", "args": {"command": "// *"}}]}}')
    expect(Result.isSuccess(r) && r.success.policy.deny[0]?.args).toEqual({ command: "// *" })
  })

  it("trailing commas are rejected, each with its position", () => {
    const text = lines("{", '  "builtin_tools": ["bash",],', '  "max_rewrite_rounds": 4,', "}")
    const trailing = "trailing comma (abhed.json allows comments, not trailing commas): remove it"
    expect(linesOf(text)).toEqual([`2:27: ${trailing}`, `3:26: ${trailing}`])
  })

  it("a file of comments only is empty, with the empty file's hint", () => {
    const hint = "invalid JSON: the file is empty (only comments; a config with nothing in it is {})"
    expect(linesOf("// no extensions yet\n")).toEqual([`2:1: ${hint}`])
    expect(linesOf("/* a */ // b\n  ")).toEqual([`2:3: ${hint}`])
    // A comment next to a stray token is not an empty file.
    expect(linesOf("// x\n,")).toEqual(["2:1: invalid JSON: expected a value"])
  })

  it("an unterminated block comment is a syntax error", () => {
    expect(linesOf("{} /* x")).toEqual(["1:4: invalid JSON: unterminated /* comment"])
  })
})

describe("parseConfig: every problem has its line and column", () => {
  it("a value's problem points at its key in an object, at the item in an array", () => {
    const text = lines(
      "{",
      '  "extensions": [',
      '    { "name": "guard", "command": "bash", "events": ["tool_call", "tool_calls"],',
      '      "timeout_ms": -1 }',
      "  ]",
      "}"
    )
    expect(issuesOf(text).map((i) => [i.path, i.line, i.column])).toEqual([
      ["extensions[0].events[1]", 3, 67],
      ["extensions[0].timeout_ms", 4, 7]
    ])
  })

  it("a missing key points at its object and, like every problem, is listed in the order of its position", () => {
    const text = lines('{"extensions": [', '  {"command": ""}', "]}")
    expect(linesOf(text)).toEqual([
      "2:3: extensions[0].name: missing; every extension needs a unique name",
      "2:4: extensions[0].command: must be a non-empty string"
    ])
  })

  it("problems are listed by line and column, whatever their kind", () => {
    const text = lines(
      '{"extensions": [',
      '  {"name": "a", "command": "x", "timeout_ms": 0},',
      "  {",
      '    "args": [1],',
      '    "grace_ms": -1',
      "  }",
      '], "policy": {"deny": [{"reason": 1}]}, "max_rewrite_rounds": 0}'
    )
    const positions = issuesOf(text).map((i) => [i.line ?? 0, i.column ?? 0] as const)
    expect(positions).toEqual([...positions].sort((a, b) => a[0] - b[0] || a[1] - b[1]))
    expect(issuesOf(text).map((i) => i.path)).toEqual([
      "extensions[0].timeout_ms",
      "extensions[1].name",
      "extensions[1].command",
      "extensions[1].args[0]",
      "extensions[1].grace_ms",
      "policy.deny[0].tool",
      "policy.deny[0].reason",
      "max_rewrite_rounds"
    ])
  })

  it("lines are counted over \\n, \\r\\n and \\r; a leading byte order mark is not a column", () => {
    expect(linesOf('\ufeff{\r\n"max_rewrite_rounds": 0}')).toEqual([
      "2:1: max_rewrite_rounds: must be a positive integer, got 0"
    ])
    expect(linesOf('{\r"x": 1}')).toEqual([
      "2:1: x: unknown key; expected one of $schema, extensions, policy, max_rewrite_rounds, builtin_tools, allow_managed_only"
    ])
  })

  it("a file nested absurdly deep is refused with its position, not a crash", () => {
    const text = `{"x": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`
    expect(linesOf(text)).toEqual(["1:70: nested more than 64 levels deep (a config needs 6)"])
    // and decodeConfig's value walk stops at that depth too
    const deep = JSON.parse(`{"x": ${"[".repeat(5000)}${"]".repeat(5000)}}`) as unknown
    const r = decodeConfig(deep)
    expect(Result.isFailure(r) && r.failure.message).toBe(
      "x: unknown key; expected one of $schema, extensions, policy, max_rewrite_rounds, builtin_tools, allow_managed_only"
    )
  })

  it("keys named like Object.prototype members stay plain keys", () => {
    expect(linesOf('{"__proto__": {"extensions": []}, "constructor": 1}')).toEqual([
      "1:2: __proto__: unknown key; expected one of $schema, extensions, policy, max_rewrite_rounds, builtin_tools, allow_managed_only",
      "1:35: constructor: unknown key; expected one of $schema, extensions, policy, max_rewrite_rounds, builtin_tools, allow_managed_only"
    ])
  })
})
