import * as NodeServices from "@effect/platform-node/NodeServices"
import { takesPart } from "@abhed/core"
import { Effect, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { hookArgsProblem } from "../../packages/cli/src/hook/HookCommand.ts"
import { toConfig } from "../../packages/cli/src/hook/HookConfig.ts"
import type { HookFormat } from "../../packages/cli/src/hook/HookFormat.ts"
import { matches, parseMatcher } from "../../packages/cli/src/hook/HookMatcher.ts"
import { readSettings } from "../../packages/cli/src/hook/HookSettings.ts"
import { peerToolName, toolNames } from "../../packages/cli/src/hook/HookToolNames.ts"

/** What import-hooks generates, checked without processes (hooks.test.ts runs the generated configs). */

const problem = (args: ReadonlyArray<string>) =>
  Effect.runPromise(hookArgsProblem(args).pipe(Effect.provide(NodeServices.layer)))

describe("import-hooks' start-check (hookArgsProblem): the adapter's own parser and checks", () => {
  it("a matcher that starts with '-' passed as its own word is read as a flag; as --matcher=… it is the matcher", async () => {
    expect(await problem(["--format", "claude", "--matcher", "-?Bash", "--", "true"])).toBeDefined()
    expect(
      await problem(["--format=claude", "--matcher=-?Bash", "--timeout-ms=10000", "--", "bash", "-c", "true"])
    ).toBeUndefined()
  })

  it("a matcher the adapter refuses, a bad --timeout-ms and a missing command are problems, with what was wrong", async () => {
    expect(await problem(["--format=claude", "--matcher=([", "--", "true"])).toContain("not a valid regular expression")
    expect(await problem(["--format=claude", "--timeout-ms=0", "--", "true"])).toBeDefined()
    expect(await problem(["--format=claude"])).toBeDefined()
  })
})

/** Tool names the property draws from: the peers' and ours, their case variants, and names of no table. */
const toolName = fc.oneof(
  fc.constantFrom(
    "bash",
    "Bash",
    "BASH",
    "read",
    "Read",
    "edit",
    "Edit",
    "write",
    "Write",
    "MultiEdit",
    "glob",
    "Glob",
    "grep",
    "Grep"
  ),
  fc.constantFrom(
    "run_shell_command",
    "read_file",
    "write_file",
    "replace",
    "search_file_content",
    "mcp__github__search"
  ),
  fc.stringMatching(/^[A-Za-z0-9_]{1,6}$/)
)

const matcherOf = fc.oneof(
  fc.array(toolName, { minLength: 1, maxLength: 4 }).map((names) => names.join("|")),
  fc.constantFrom("*", "", "Bash|", "^Ba", "mcp__.*", "-?Bash", "(?i)bash", "[Bb]ash", "run_shell_command ")
)

const generated = (format: HookFormat, matcher: string, event: string) => {
  const read = readSettings(format, {
    hooks: { [event]: [{ matcher, hooks: [{ type: "command", command: "true" }] }] }
  })
  if (Result.isFailure(read)) throw new Error(read.failure)
  return toConfig(read.success, { command: "abhed-ext", args: [] }, ".").extensions
}

describe("import-hooks' match rules cover every call the adapter's matcher accepts", () => {
  for (const [format, event] of [
    ["claude", "PreToolUse"],
    ["claude", "PostToolUse"],
    ["gemini", "BeforeTool"]
  ] as const) {
    it(`${format} ${event}`, () => {
      fc.assert(
        fc.property(matcherOf, toolName, (matcher, tool) => {
          const parsed = parseMatcher(format, matcher)
          // A matcher the adapter refuses is not carried over at all (said on stderr).
          if (Result.isFailure(parsed)) return generated(format, matcher, event).length === 0
          const [extension] = generated(format, matcher, event)
          const accepted = matches(parsed.success, peerToolName(toolNames(format), tool))
          const match = extension?.["match"] as Parameters<typeof takesPart>[0]
          return !accepted || takesPart(match, { tool, args: {} })
        }),
        { numRuns: 2000 }
      )
    })
  }

  it("matcher Bash: a call to a tool named Bash reaches the hook as well as one to bash", () => {
    const [extension] = generated("claude", "Bash", "PreToolUse")
    expect(extension?.["match"]).toEqual([{ tool: "bash" }, { tool: "Bash" }])
  })
})
