import type { PolicyRule } from "@abhed/protocol"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { takesPart } from "../src/Matcher.ts"
import { matchesRule } from "../src/Policy.ts"

const rule = (tool: string, args: Record<string, string> = {}): PolicyRule => ({ tool, args, reason: undefined })
const bash = (command: string) => ({ tool: "bash", args: { command, description: "git push later" } })

describe("takesPart", () => {
  it("no match configured: every call; an empty list: no call", () => {
    expect(takesPart(undefined, bash("ls"))).toBe(true)
    expect(takesPart([], bash("ls"))).toBe(false)
  })

  it("any rule matching, with the policy's glob semantics (named args only, not the whole call)", () => {
    const guard = [rule("bash", { command: "git push*" }), rule("write", { path: "*.env" })]
    expect(takesPart(guard, bash("git push --force"))).toBe(true)
    expect(takesPart(guard, bash("git push"))).toBe(true)
    // The description mentions git push; only `command` is matched.
    expect(takesPart(guard, bash("ls"))).toBe(false)
    expect(takesPart(guard, { tool: "write", args: { path: "src/.env" } })).toBe(true)
    expect(takesPart(guard, { tool: "write", args: {} })).toBe(false)
    expect(takesPart([rule("*")], { tool: "anything", args: {} })).toBe(true)
  })

  it("is exactly `some` over the policy's matchesRule", () => {
    const glob = fc.constantFrom("*", "bash", "b?sh", "git *", "*push*", "ls", "\\*", "")
    const rules = fc.array(
      fc.record({
        tool: glob,
        args: fc.dictionary(fc.constantFrom("command", "path"), glob, { maxKeys: 2 }),
        reason: fc.constant(undefined)
      }),
      { maxLength: 3 }
    )
    const call = fc.record({
      tool: fc.constantFrom("bash", "read", "*"),
      args: fc.dictionary(fc.constantFrom("command", "path"), fc.constantFrom("ls", "git push", "*", "", "bash"), {
        maxKeys: 2
      })
    })
    fc.assert(
      fc.property(fc.option(rules, { nil: undefined }), call, (match, c) => {
        expect(takesPart(match, c)).toBe(match === undefined || match.some((r) => matchesRule(r, c)))
      }),
      { numRuns: 1000 }
    )
  })
})
