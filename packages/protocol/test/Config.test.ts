import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import {
  type Config,
  ConfigError,
  type ConfigIssue,
  decodeConfig,
  Defaults,
  EventNames,
  parseConfig
} from "../src/index.ts"

const decoded = (input: unknown): Config => {
  const r = decodeConfig(input)
  if (Result.isFailure(r)) throw new Error(`expected a valid config, got:\n${r.failure.message}`)
  return r.success
}
const issuesOf = (input: unknown): ReadonlyArray<ConfigIssue> => {
  const r = decodeConfig(input)
  if (Result.isSuccess(r)) throw new Error(`expected a ConfigError, got ${JSON.stringify(r.success)}`)
  return r.failure.issues
}
/** The issue lines, as the user sees them. */
const linesOf = (input: unknown): ReadonlyArray<string> => {
  const r = decodeConfig(input)
  if (Result.isSuccess(r)) throw new Error(`expected a ConfigError, got ${JSON.stringify(r.success)}`)
  return r.failure.message.split("\n")
}
const ext = (fields: Record<string, unknown> = {}) => ({ name: "guard", command: "bash", ...fields })
/** The single issue line for one extension field. */
const extIssue = (fields: Record<string, unknown>) => linesOf({ extensions: [ext(fields)] })

describe("decodeConfig: defaults", () => {
  it("an empty object is a valid config: no extensions, allow-all policy, 4 rounds, no builtin tools", () => {
    expect(decoded({})).toEqual({
      extensions: [],
      policy: { deny: [], ask: [], allow: [], default: "allow" },
      max_rewrite_rounds: 4,
      builtin_tools: []
    })
  })

  it("an extension with only name and command gets every default", () => {
    const config = decoded({ extensions: [{ name: "guard", command: "bash" }] })
    expect(config.extensions).toEqual([
      {
        name: "guard",
        command: "bash",
        args: [],
        events: [],
        timeout_ms: 5000,
        startup_timeout_ms: 10000,
        grace_ms: 1000,
        on_failure: "ignore",
        cwd: undefined,
        env: {},
        env_passthrough: [],
        reply_ids: "optional",
        match: undefined
      }
    ])
    const [only] = config.extensions
    expect(only !== undefined && Object.hasOwn(only, "cwd")).toBe(true) // present, as the type says
  })

  it("the default values are the documented ones", () => {
    expect(Defaults).toMatchObject({
      timeout_ms: 5000,
      startup_timeout_ms: 10000,
      grace_ms: 1000,
      on_failure: "ignore",
      max_rewrite_rounds: 4
    })
  })

  it("a policy with only some keys gets the rest defaulted; rules default args {} and reason undefined", () => {
    expect(decoded({ policy: { deny: [{ tool: "bash" }] } }).policy).toEqual({
      deny: [{ tool: "bash", args: {}, reason: undefined }],
      ask: [],
      allow: [],
      default: "allow"
    })
  })

  it("every key given is carried through unchanged", () => {
    const file = {
      $schema: "./docs/abhed.schema.json",
      extensions: [
        {
          name: "guard.v2_x-1",
          command: "python3",
          args: ["guard.py", "--strict"],
          events: ["tool_call", "tool_result"],
          timeout_ms: 250,
          startup_timeout_ms: 3000,
          grace_ms: 0,
          on_failure: "deny",
          cwd: "extensions/guard",
          env: { GUARD_MODE: "strict", EMPTY: "" },
          env_passthrough: ["GITHUB_TOKEN", "AWS_*"],
          reply_ids: "required",
          match: [{ tool: "bash", args: { command: "git push*" }, reason: "pushes" }]
        },
        { name: "0audit", command: "./audit.sh" }
      ],
      policy: {
        deny: [{ tool: "bash", args: { command: "rm -rf *" }, reason: "no rm -rf" }],
        ask: [{ tool: "write", args: { path: "/etc/*" } }],
        allow: [{ tool: "read" }],
        default: "ask"
      },
      max_rewrite_rounds: 2,
      builtin_tools: ["bash", "read", "write"]
    }
    const config = decoded(file)
    expect(config.extensions[0]).toEqual(file.extensions[0])
    expect(config.extensions[1]?.name).toBe("0audit")
    expect(config.policy).toEqual({
      deny: [{ tool: "bash", args: { command: "rm -rf *" }, reason: "no rm -rf" }],
      ask: [{ tool: "write", args: { path: "/etc/*" }, reason: undefined }],
      allow: [{ tool: "read", args: {}, reason: undefined }],
      default: "ask"
    })
    expect(config.max_rewrite_rounds).toBe(2)
    expect(config.builtin_tools).toEqual(["bash", "read", "write"])
  })

  it("every event name is accepted in events", () => {
    expect(decoded({ extensions: [ext({ events: [...EventNames] })] }).extensions[0]?.events).toEqual(EventNames)
  })
})

describe("decodeConfig: every problem names its path and the fix", () => {
  it("unknown event", () => {
    expect(linesOf({ extensions: [ext(), ext({ name: "b", events: ["tool_calls"] })] })).toEqual([
      `extensions[1].events[0]: unknown event "tool_calls"; expected one of ${EventNames.join(
        ", "
      )}; did you mean "tool_call"?`
    ])
  })

  it("an event that is not a string, and a duplicate event", () => {
    expect(extIssue({ events: ["tool_call", 3] })).toEqual([
      `extensions[0].events[1]: must be an event name (one of ${EventNames.join(", ")}), got 3`
    ])
    // Repeats are checked once every item is valid (a relation between items, after the items).
    expect(extIssue({ events: ["tool_call", "context", "tool_call", "context"] })).toEqual([
      'extensions[0].events[2]: duplicate event "tool_call" (also extensions[0].events[0])',
      'extensions[0].events[3]: duplicate event "context" (also extensions[0].events[1])'
    ])
    expect(extIssue({ events: "tool_call" })).toEqual([
      'extensions[0].events: must be an array of event names, got "tool_call"'
    ])
  })

  it("duplicate names", () => {
    expect(linesOf({ extensions: [ext(), ext({ name: "other" }), ext()] })).toEqual([
      'extensions[2].name: duplicate name "guard" (also extensions[0]); names must be unique'
    ])
  })

  it("names that differ only in case are distinct", () => {
    expect(decoded({ extensions: [ext(), ext({ name: "Guard" })] }).extensions.map((e) => e.name)).toEqual([
      "guard",
      "Guard"
    ])
  })

  it("empty or missing command", () => {
    expect(extIssue({ command: "" })).toEqual(["extensions[0].command: must be a non-empty string"])
    expect(extIssue({ command: ["bash"] })).toEqual(["extensions[0].command: must be a non-empty string, got an array"])
    expect(linesOf({ extensions: [{ name: "guard" }] })).toEqual([
      'extensions[0].command: missing; the program to run, e.g. "bash"'
    ])
  })

  it.each([
    [-5, "-5"],
    [0, "0"],
    [1.5, "1.5"],
    ["5000", '"5000"'],
    [null, "null"],
    [1e300, "1e+300"]
  ])("timeout_ms %j is not a positive integer", (value, shown) => {
    expect(extIssue({ timeout_ms: value })).toEqual([
      `extensions[0].timeout_ms: must be a positive integer (milliseconds), got ${shown}`
    ])
    expect(extIssue({ startup_timeout_ms: value })).toEqual([
      `extensions[0].startup_timeout_ms: must be a positive integer (milliseconds), got ${shown}`
    ])
  })

  it("grace_ms may be 0 but not negative", () => {
    expect(decoded({ extensions: [ext({ grace_ms: 0 })] }).extensions[0]?.grace_ms).toBe(0)
    expect(extIssue({ grace_ms: -1 })).toEqual([
      "extensions[0].grace_ms: must be a non-negative integer (milliseconds), got -1"
    ])
  })

  it("unknown on_failure", () => {
    expect(extIssue({ on_failure: "block" })).toEqual([
      'extensions[0].on_failure: unknown value "block"; expected one of ignore, ask, deny'
    ])
    expect(extIssue({ on_failure: "Deny" })).toEqual([
      'extensions[0].on_failure: unknown value "Deny"; expected one of ignore, ask, deny; did you mean "deny"?'
    ])
    expect(extIssue({ on_failure: true })).toEqual([
      "extensions[0].on_failure: must be one of ignore, ask, deny, got true"
    ])
  })

  it("protocol: abhed or mcp; an MCP server's events are list_tools and invoke_tool only, its name a tool prefix", () => {
    expect(extIssue({ protocol: "MCP" })).toEqual([
      'extensions[0].protocol: unknown value "MCP"; expected one of abhed, mcp; did you mean "mcp"?'
    ])
    expect(extIssue({ protocol: "mcp", events: ["list_tools", "tool_call"] })).toEqual([
      'extensions[0].events[1]: an MCP server (protocol "mcp") answers list_tools and invoke_tool only, so it cannot take part in tool_call; leave events out, or run what should see tool_call as an extension of its own'
    ])
    expect(linesOf({ extensions: [{ name: "my.fs", command: "node", protocol: "mcp" }] })).toEqual([
      "extensions[0].name: an MCP server's name (protocol \"mcp\") is its tools' prefix, mcp__NAME__TOOL: letters, digits, _ and - only, 1 to 40 characters"
    ])
    const ok = decodeConfig({
      extensions: [
        ext({ protocol: "mcp", events: ["invoke_tool"] }),
        ext({ name: "b", protocol: "abhed", events: ["tool_call"] })
      ]
    })
    expect(Result.isSuccess(ok)).toBe(true)
  })

  it("unknown keys, with a hint for typos", () => {
    expect(extIssue({ timeout: 5 })).toEqual(['extensions[0].timeout: unknown key; did you mean "timeout_ms"?'])
    expect(extIssue({ evnets: [] })).toEqual(['extensions[0].evnets: unknown key; did you mean "events"?'])
    expect(extIssue({ zzz: 1 })).toEqual([
      "extensions[0].zzz: unknown key; expected one of name, command, args, events, timeout_ms, startup_timeout_ms, grace_ms, on_failure, cwd, env, env_passthrough, reply_ids, match, protocol"
    ])
    expect(linesOf({ extension: [] })).toEqual(['extension: unknown key; did you mean "extensions"?'])
    expect(linesOf({ policy: { denny: [] } })).toEqual(['policy.denny: unknown key; did you mean "deny"?'])
    expect(linesOf({ policy: { deny: [{ tool: "x", arg: {} }] } })).toEqual([
      'policy.deny[0].arg: unknown key; did you mean "args"?'
    ])
    expect(linesOf({ "my key": 1 })).toEqual([
      '["my key"]: unknown key; expected one of $schema, extensions, policy, max_rewrite_rounds, builtin_tools, allow_managed_only'
    ])
  })

  it("an allow-like key is unknown everywhere in an extension: typo protection also guards against permits", () => {
    expect(extIssue({ allow: true })).toEqual([
      "extensions[0].allow: unknown key; expected one of name, command, args, events, timeout_ms, startup_timeout_ms, grace_ms, on_failure, cwd, env, env_passthrough, reply_ids, match, protocol"
    ])
  })

  it("keys named like Object.prototype members are unknown keys, not a crash", () => {
    const input = JSON.parse(
      '{"__proto__": {}, "toString": 1, "extensions": [{"name": "a", "command": "b", "constructor": 1}]}'
    )
    expect(linesOf(input)).toEqual([
      "__proto__: unknown key; expected one of $schema, extensions, policy, max_rewrite_rounds, builtin_tools, allow_managed_only",
      "toString: unknown key; expected one of $schema, extensions, policy, max_rewrite_rounds, builtin_tools, allow_managed_only",
      "extensions[0].constructor: unknown key; expected one of name, command, args, events, timeout_ms, startup_timeout_ms, grace_ms, on_failure, cwd, env, env_passthrough, reply_ids, match, protocol"
    ])
  })

  it('names must match the pattern and must not be "policy"', () => {
    const invalid = (name: string) =>
      `extensions[0].name: invalid name ${JSON.stringify(
        name
      )}; use letters, digits, ".", "_" and "-", starting with a letter or digit`
    for (const name of ["my guard", "-x", ".hidden", "a/b", "é", "x\n"]) {
      expect(extIssue({ name })).toEqual([invalid(name)])
    }
    expect(extIssue({ name: "policy" })).toEqual([
      'extensions[0].name: the name "policy" is reserved in any case (decisions name the policy engine "policy"); choose another name'
    ])
    // "host" names the host's own fail-closed reasons (input nested too deep): an extension may not pass for it.
    expect(extIssue({ name: "host" })).toEqual([
      'extensions[0].name: the name "host" is reserved in any case (decisions name the host\'s own reasons "host"); choose another name'
    ])
    // In any case: a reason from "Policy" would read like the policy's own.
    for (const name of ["Policy", "POLICY", "pOlIcY"]) {
      expect(extIssue({ name })).toEqual([
        `extensions[0].name: the name ${JSON.stringify(name)} is reserved in any case (decisions name the policy engine "policy"); choose another name`
      ])
    }
    expect(extIssue({ name: "Host" })).toEqual([
      'extensions[0].name: the name "Host" is reserved in any case (decisions name the host\'s own reasons "host"); choose another name'
    ])
    expect(
      decoded({ extensions: [ext({ name: "policy2" }), ext({ name: "hosts" }), ext({ name: "my-policy" })] }).extensions
        .length
    ).toBe(3)
    // An empty match list would silently turn a guard off for every tool call.
    expect(extIssue({ match: [] })).toEqual([
      "extensions[0].match: an empty match list matches no call, so the extension would never see a tool call; leave match out to take part in every call"
    ])
    expect(decoded({ extensions: [ext({ match: [{ tool: "bash" }] })] }).extensions[0]?.match).toEqual([
      { tool: "bash", args: {}, reason: undefined }
    ])
    expect(extIssue({ name: "" })).toEqual([
      "extensions[0].name: must be a non-empty string (the extension's unique name)"
    ])
    expect(linesOf({ extensions: [{ command: "bash" }] })).toEqual([
      "extensions[0].name: missing; every extension needs a unique name"
    ])
  })

  it("args, cwd and env", () => {
    expect(extIssue({ args: "guard.sh" })).toEqual(['extensions[0].args: must be an array of strings, got "guard.sh"'])
    expect(extIssue({ args: ["a", 1, null] })).toEqual([
      "extensions[0].args[1]: must be a string, got 1",
      "extensions[0].args[2]: must be a string, got null"
    ])
    expect(extIssue({ cwd: "" })).toEqual([
      "extensions[0].cwd: must be a non-empty string (a folder, relative to the config file's folder)"
    ])
    expect(extIssue({ env: ["A=1"] })).toEqual(["extensions[0].env: must be an object of string values, got an array"])
    expect(extIssue({ env: { PORT: 8080, "A=B": "x", "": "y" } })).toEqual([
      "extensions[0].env.PORT: must be a string, got 8080",
      'extensions[0].env["A=B"]: invalid variable name "A=B"; names must be non-empty and contain no "=" or NUL',
      'extensions[0].env[""]: invalid variable name ""; names must be non-empty and contain no "=" or NUL'
    ])
  })

  it("extensions and entries of the wrong shape", () => {
    expect(linesOf({ extensions: { guard: {} } })).toEqual([
      "extensions: must be an array of extensions, got an object"
    ])
    expect(linesOf({ extensions: ["bash guard.sh"] })).toEqual([
      'extensions[0]: must be an extension object like {"name": "guard", "command": "bash"}, got "bash guard.sh"'
    ])
  })

  it("policy rules and default", () => {
    expect(linesOf({ policy: { default: "block" } })).toEqual([
      'policy.default: unknown value "block"; expected one of allow, ask, deny'
    ])
    expect(linesOf({ policy: "deny" })).toEqual([
      'policy: must be an object with deny, ask, allow, default, got "deny"'
    ])
    expect(linesOf({ policy: { ask: { tool: "bash" } } })).toEqual([
      "policy.ask: must be an array of rules, got an object"
    ])
    expect(
      linesOf({ policy: { deny: ["bash", { tool: "" }, { args: { command: 1 } }, { tool: "x", reason: 2 }] } })
    ).toEqual([
      'policy.deny[0]: must be a rule object like {"tool": "bash", "args": {"command": "rm -rf *"}}, got "bash"',
      "policy.deny[1].tool: must be a non-empty string (a tool name glob)",
      "policy.deny[2].tool: missing; the tool name (a glob) this rule matches",
      "policy.deny[2].args.command: must be a string, got 1",
      "policy.deny[3].reason: must be a string, got 2"
    ])
    expect(linesOf({ policy: { allow: [{ tool: "x", args: "y" }] } })).toEqual([
      'policy.allow[0].args: must be an object of glob strings, got "y"'
    ])
  })

  it("max_rewrite_rounds and builtin_tools", () => {
    expect(linesOf({ max_rewrite_rounds: 0 })).toEqual(["max_rewrite_rounds: must be a positive integer, got 0"])
    expect(linesOf({ builtin_tools: "bash" })).toEqual(['builtin_tools: must be an array of tool names, got "bash"'])
    expect(linesOf({ builtin_tools: ["bash", "", 3] })).toEqual([
      "builtin_tools[1]: must be a non-empty string",
      "builtin_tools[2]: must be a non-empty string, got 3"
    ])
    // The rule every tool name the model sees must follow: no ".", no spaces, at most 64 characters.
    expect(linesOf({ builtin_tools: ["bash", "fs.read", "my tool", "x".repeat(65), "mcp__git__status"] })).toEqual([
      'builtin_tools[1]: invalid tool name "fs.read"; a tool name has letters, digits, _ and - only, 1 to 64 characters',
      'builtin_tools[2]: invalid tool name "my tool"; a tool name has letters, digits, _ and - only, 1 to 64 characters',
      `builtin_tools[3]: invalid tool name "${"x".repeat(65)}"; a tool name has letters, digits, _ and - only, 1 to 64 characters`
    ])
    expect(linesOf({ builtin_tools: ["bash", "read", "bash"] })).toEqual([
      'builtin_tools[2]: duplicate tool "bash" (also builtin_tools[0])'
    ])
  })

  it.each([[[]], ["{}"], [null], [42]])("a config that is not an object (%j)", (input) => {
    expect(issuesOf(input)).toEqual([
      {
        path: "",
        message: expect.stringMatching(/^the config must be a JSON object like \{"extensions": \[\.\.\.\]\}, got /)
      }
    ])
  })

  it("$schema may name the editor schema, and must be a string", () => {
    expect(decoded({ $schema: "https://example.com/abhed.schema.json" }).extensions).toEqual([])
    expect(linesOf({ $schema: 1 })).toEqual(["$schema: must be a string, got 1"])
  })
})

describe("decodeConfig: the error loses nothing", () => {
  it("reports every problem in the file at once, in document order", () => {
    const r = decodeConfig({
      extensions: [
        { name: "guard", command: "bash", timeout: 5 },
        { name: "b", command: "x", events: ["tool_calls"] },
        { name: "guard", command: "", timeout_ms: -5, on_failure: "block" }
      ],
      policy: { default: "block" },
      max_rewrite_rounds: 0,
      builtin_tools: ["bash", "bash"]
    })
    // extensions[2] repeats the name "guard", which is reported once the extensions are otherwise valid.
    if (Result.isSuccess(r)) throw new Error("expected failure")
    const error = r.failure
    expect(error).toBeInstanceOf(ConfigError)
    expect(error._tag).toBe("ConfigError")
    expect(error.issues.map((i) => i.path)).toEqual([
      "extensions[0].timeout",
      "extensions[1].events[0]",
      "extensions[2].command",
      "extensions[2].timeout_ms",
      "extensions[2].on_failure",
      "policy.default",
      "max_rewrite_rounds",
      "builtin_tools[1]"
    ])
    // One line per issue, each "path: message".
    expect(error.message.split("\n")).toEqual(error.issues.map((i) => `${i.path}: ${i.message}`))
  })

  it("problems in several fields of one extension are all reported", () => {
    expect(issuesOf({ extensions: [{ name: "policy", command: 1, args: 2, events: 3, env: 4 }] }).length).toBe(5)
  })
})

describe("parseConfig", () => {
  it("parses JSON text, skipping a leading byte order mark", () => {
    const r = parseConfig('\ufeff{"extensions": [{"name": "guard", "command": "bash"}]}')
    expect(Result.isSuccess(r) && r.success.extensions[0]?.name).toBe("guard")
  })

  it("a JSON syntax error is a ConfigError naming the position", () => {
    const r = parseConfig('{\n  "extensions": [\n    {"name": "a" "command": "b"}\n  ]\n}')
    if (Result.isSuccess(r)) throw new Error("expected failure")
    expect(r.failure._tag).toBe("ConfigError")
    expect(r.failure.issues).toEqual([
      { path: "", message: 'invalid JSON: expected "," before this', line: 3, column: 18 }
    ])
    expect(r.failure.message).toBe('3:18: invalid JSON: expected "," before this') // one problem, one line
  })

  it("a syntax error is reported once, on one line, not with the parser's guesses after it", () => {
    const r = parseConfig("nope\n{}")
    expect(Result.isFailure(r) && r.failure.message).toBe('1:1: invalid JSON: unexpected "nope"')
    const quotes = parseConfig("{'extensions': []}")
    expect(Result.isFailure(quotes) && quotes.failure.message).toBe(
      "1:2: invalid JSON: unexpected \"'extensions'\" (strings and keys take double quotes)"
    )
  })

  it("empty text is a ConfigError", () => {
    const r = parseConfig(" \n")
    expect(Result.isFailure(r) && r.failure.message).toBe(
      "2:1: invalid JSON: the file is empty (a config with nothing in it is {})"
    )
  })

  it("decoding problems of parsed text are reported like decodeConfig's, with their line and column", () => {
    const r = parseConfig('{"max_rewrite_rounds": -1, "builtin_tools": [""]}')
    expect(Result.isFailure(r) && r.failure.message).toBe(
      "1:2: max_rewrite_rounds: must be a positive integer, got -1\n1:46: builtin_tools[0]: must be a non-empty string"
    )
  })
})
