import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { parseConfig } from "../src/index.ts"
import { MaxReplacedViews } from "../src/ConfigText.ts"

/**
 * Issue 24.2: "every problem is listed" holds when a key is repeated. The value a repeated key replaced is
 * checked too, in the document as it would read had it been kept: its problems were never reported, and showed up
 * only once the user deleted the other occurrence.
 */

const linesOf = (text: string): ReadonlyArray<string> => {
  const r = parseConfig(text)
  if (Result.isSuccess(r)) throw new Error(`expected a ConfigError, got ${JSON.stringify(r.success)}`)
  return r.failure.message.split("\n")
}
const lines = (...ls: ReadonlyArray<string>): string => ls.join("\n")
const repeated = "a repeated key would silently replace the first; keep one"

describe("parseConfig: the problems inside a replaced value are listed too", () => {
  it('a bad event in the first "extensions", replaced by a second one', () => {
    const text = lines(
      "{",
      '  "extensions": [',
      '    { "name": "guard", "command": "bash", "events": ["tool_calls"] }',
      "  ],",
      '  "extensions": []',
      "}"
    )
    expect(linesOf(text)).toEqual([
      '3:54: extensions[0].events[0]: unknown event "tool_calls"; expected one of tool_call, tool_result, context, ' +
        'before_agent_start, before_compact, list_tools, invoke_tool, session_start, session_end; did you mean "tool_call"?',
      `5:3: extensions: duplicate key "extensions" on lines 2 and 5: ${repeated}`
    ])
  })

  it("three occurrences, each wrong in its own way, and the problem of the kept one", () => {
    const text = lines(
      "{",
      '  "max_rewrite_rounds": 0,',
      '  "max_rewrite_rounds": "x",',
      '  "max_rewrite_rounds": -1',
      "}"
    )
    expect(linesOf(text)).toEqual([
      "2:3: max_rewrite_rounds: must be a positive integer, got 0",
      `3:3: max_rewrite_rounds: duplicate key "max_rewrite_rounds" on lines 2 and 3: ${repeated}`,
      '3:3: max_rewrite_rounds: must be a positive integer, got "x"',
      `4:3: max_rewrite_rounds: duplicate key "max_rewrite_rounds" on lines 3 and 4: ${repeated}`,
      "4:3: max_rewrite_rounds: must be a positive integer, got -1"
    ])
  })

  it("a repeat inside a replaced value: both of its values are checked", () => {
    const text = lines(
      "{",
      '  "policy": { "deny": [{ "tool": 1 }],',
      '              "deny": [{ "tool": 2 }] },',
      '  "policy": {}',
      "}"
    )
    expect(linesOf(text)).toEqual([
      "2:26: policy.deny[0].tool: must be a non-empty string (a tool name glob), got 1",
      '3:15: policy.deny: duplicate key "deny" on lines 2 and 3: ' + repeated,
      "3:26: policy.deny[0].tool: must be a non-empty string (a tool name glob), got 2",
      `4:3: policy: duplicate key "policy" on lines 2 and 4: ${repeated}`
    ])
  })

  it("a valid replaced value adds nothing but the repeat itself", () => {
    const text = lines("{", '  "builtin_tools": ["bash"],', '  "builtin_tools": ["read"]', "}")
    expect(linesOf(text)).toEqual([`3:3: builtin_tools: duplicate key "builtin_tools" on lines 2 and 3: ${repeated}`])
  })

  it("a key repeated thousands of times: the work is bounded, and what was not checked is said", () => {
    const n = MaxReplacedViews + 50
    const text = `{${Array.from({ length: n }, () => '\n"max_rewrite_rounds": 0').join(",")}}`
    const out = linesOf(text)
    expect(out.filter((l) => l.includes("must be a positive integer"))).toHaveLength(MaxReplacedViews + 1)
    expect(out.filter((l) => l.includes("were not checked"))).toEqual([
      `${MaxReplacedViews + 2}:1: max_rewrite_rounds: 49 value(s) replaced by repeated keys, from here on, were not checked ` +
        `(only the first ${MaxReplacedViews} are): remove the repeated keys`
    ])
  })
})
