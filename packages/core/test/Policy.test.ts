import { isJsonObject, type PolicyConfig, type PolicyRule } from "@abhed/protocol"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  allowAll,
  evaluatePolicy,
  evaluateRules,
  type HookDecision,
  matchesRule,
  type PolicyHook
} from "../src/Policy.ts"

const rule = (tool: string, args: Record<string, string> = {}, reason?: string): PolicyRule => ({ tool, args, reason })
const bash = (command: string, extra: Record<string, unknown> = {}) => ({ tool: "bash", args: { command, ...extra } })

const policy: PolicyConfig = {
  deny: [rule("bash", { command: "rm -rf *" }, "no rm -rf")],
  ask: [rule("write"), rule("bash", { command: "git push*" })],
  allow: [rule("read"), rule("bash")],
  default: "deny"
}

describe("matchesRule", () => {
  it("tool glob and arg globs", () => {
    expect(matchesRule(rule("ba*"), bash("ls"))).toBe(true)
    expect(matchesRule(rule("read"), bash("ls"))).toBe(false)
    expect(matchesRule(rule("bash", { command: "rm -rf *" }), bash("rm -rf /tmp/x"))).toBe(true)
    expect(matchesRule(rule("bash", { command: "rm -rf *" }), bash("ls /"))).toBe(false)
  })
  it("every named arg must match; a missing arg is no match", () => {
    const r = rule("bash", { command: "*", cwd: "/etc*" })
    expect(matchesRule(r, bash("ls", { cwd: "/etc/x" }))).toBe(true)
    expect(matchesRule(r, bash("ls", { cwd: "/home" }))).toBe(false)
    expect(matchesRule(r, bash("ls"))).toBe(false)
    expect(matchesRule(rule("bash", { cwd: "*" }), { tool: "bash", args: { cwd: undefined } })).toBe(false)
  })
  it("non-string args are matched as canonical JSON text", () => {
    expect(matchesRule(rule("t", { n: "42" }), { tool: "t", args: { n: 42 } })).toBe(true)
    expect(matchesRule(rule("t", { f: "true" }), { tool: "t", args: { f: true } })).toBe(true)
    expect(matchesRule(rule("t", { v: "null" }), { tool: "t", args: { v: null } })).toBe(true)
    expect(matchesRule(rule("t", { o: '{"a":1,"b":2}' }), { tool: "t", args: { o: { b: 2, a: 1 } } })).toBe(true)
    expect(matchesRule(rule("t", { xs: '*"rm"*' }), { tool: "t", args: { xs: ["ls", "rm"] } })).toBe(true)
  })
  it("a rule without args matches any args of the tool", () => {
    expect(matchesRule(rule("read"), { tool: "read", args: {} })).toBe(true)
  })
})

describe("evaluateRules", () => {
  it("deny rules before ask before allow, then the default; first match in a list", () => {
    expect(evaluateRules(policy, bash("rm -rf /"))).toEqual({
      level: "deny",
      source: "rule:deny[0]",
      reason: "no rm -rf"
    })
    expect(evaluateRules(policy, bash("git push origin"))).toEqual({
      level: "ask",
      source: "rule:ask[1]",
      reason: undefined
    })
    expect(evaluateRules(policy, { tool: "write", args: {} })).toEqual({
      level: "ask",
      source: "rule:ask[0]",
      reason: undefined
    })
    expect(evaluateRules(policy, bash("ls"))).toEqual({ level: "allow", source: "rule:allow[1]", reason: undefined })
    expect(evaluateRules(policy, { tool: "fetch", args: {} })).toEqual({
      level: "deny",
      source: "default",
      reason: undefined
    })
  })
  it("a deny rule wins even when an allow rule also matches", () => {
    const p: PolicyConfig = { deny: [rule("bash")], ask: [], allow: [rule("*")], default: "allow" }
    expect(evaluateRules(p, bash("ls")).level).toBe("deny")
  })
  it("no policy configured = allow everything", () => {
    expect(evaluateRules(allowAll, bash("rm -rf /"))).toEqual({ level: "allow", source: "default", reason: undefined })
  })
})

describe("evaluatePolicy", () => {
  const hook = (name: string, decision: HookDecision, calls: Array<string>): PolicyHook => ({
    name,
    decide: () =>
      Effect.sync(() => {
        calls.push(name)
        return decision
      })
  })
  const run = (hooks: ReadonlyArray<PolicyHook>, call = bash("rm -rf /")) =>
    Effect.runSync(evaluatePolicy(policy, hooks, call))

  it("no hooks, or all abstain → the rules", () => {
    const calls: Array<string> = []
    expect(run([])).toEqual(evaluateRules(policy, bash("rm -rf /")))
    expect(run([hook("a", "abstain", calls), hook("b", "abstain", calls)]).source).toBe("rule:deny[0]")
    expect(calls).toEqual(["a", "b"])
  })
  it("the first non-abstaining hook decides; later hooks are not asked", () => {
    const calls: Array<string> = []
    expect(run([hook("a", "abstain", calls), hook("b", "ask", calls), hook("c", "deny", calls)])).toEqual({
      level: "ask",
      source: "hook:b",
      reason: undefined
    })
    expect(calls).toEqual(["a", "b"])
  })
  it("a hook allow short-circuits the deny rules (operator code may permit)", () => {
    expect(run([hook("trusted", "allow", [])])).toEqual({ level: "allow", source: "hook:trusted", reason: undefined })
  })
  it("a hook deny overrides an allow rule", () => {
    expect(run([hook("h", "deny", [])], bash("ls"))).toEqual({ level: "deny", source: "hook:h", reason: undefined })
  })
})

describe("argText with odd keys", () => {
  it("a deny rule on an object arg sees a `__proto__` key in it", () => {
    const args: unknown = JSON.parse(`{"command":{"__proto__":"rm -rf /"}}`)
    if (!isJsonObject(args)) throw new Error("not an object")
    const call = { tool: "bash", args }
    expect(matchesRule(rule("bash", { command: "*rm -rf*" }), call)).toBe(true)
  })
})
