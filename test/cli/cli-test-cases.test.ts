import { XMLParser, XMLValidator } from "fast-xml-parser"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { fixture } from "../support/extension-helpers.ts"
import { configFile, guard, redactor, tempDir } from "../support/replay-extensions.ts"

/**
 * `abhed-ext test`: each case through the config's real extensions (node processes), PASS or FAIL with what was
 * expected and what came, a malformed line a failed case that stops nothing, exit 1 on any failure, and a JUnit
 * report that a real XML parser reads back.
 */

const cases = fixture("replay/cases.jsonl")

/** Each test starts node processes (seconds on a busy machine): a generous bound, never reached unless something hangs. */
const Slow = 240_000
const failing = fixture("replay/failing-cases.jsonl")

interface Parsed {
  readonly testsuites: {
    readonly "@_tests": string
    readonly "@_failures": string
    readonly testsuite: {
      readonly "@_name": string
      readonly "@_tests": string
      readonly "@_failures": string
      readonly testcase: ReadonlyArray<{
        readonly "@_name": string
        readonly "@_classname": string
        readonly "@_time": string
        readonly failure?: { readonly "@_message": string; readonly "@_type": string; readonly "#text": string }
      }>
    }
  }
}

const parseJUnit = (file: string): Parsed => {
  const xml = readFileSync(file, "utf8")
  expect(XMLValidator.validate(xml)).toBe(true)
  const parsed: Parsed = new XMLParser({
    ignoreAttributes: false,
    isArray: (name) => name === "testcase",
    parseAttributeValue: false,
    trimValues: false
  }).parse(xml)
  return parsed
}

describe.concurrent("abhed-ext test", () => {
  it(
    "passes every case a config decides as expected: exit 0, one PASS line each, a JUnit report without failures",
    async () => {
      const junit = join(tempDir(), "junit.xml")
      const r = await runCli(["test", "-c", configFile([guard, redactor]), cases, "--junit", junit])
      const lines = r.stdout.trimEnd().split("\n")
      expect(lines).toEqual([
        `PASS ${cases}:1 rm -rf is denied: deny (guard: rm -rf is not permitted here)`,
        `PASS ${cases}:2 bash {"command":"ls"}: allow`,
        `PASS ${cases}:3 .env is read as the example: allow (args rewritten by redactor) args {"command":"cat .env.example"}`,
        `PASS ${cases}:4 keys are redacted: content "KEY=[redacted]", is_error false, by redactor`,
        // Line 5 is blank: no case.
        `PASS ${cases}:6 a fatal build is an error: content "FATAL: no rule", is_error true, by guard`,
        "5 cases: 5 passed, 0 failed"
      ])
      expect(r.code).toBe(0)
      const report = parseJUnit(junit).testsuites
      expect(report["@_tests"]).toBe("5")
      expect(report["@_failures"]).toBe("0")
      expect(report.testsuite.testcase.map((c) => c["@_name"])).toEqual([
        `${cases}:1 rm -rf is denied`,
        `${cases}:2 bash {"command":"ls"}`,
        `${cases}:3 .env is read as the example`,
        `${cases}:4 keys are redacted`,
        `${cases}:6 a fatal build is an error`
      ])
      expect(report.testsuite.testcase.every((c) => c.failure === undefined && c["@_classname"] === cases)).toBe(true)
    },
    Slow
  )

  it(
    "fails the cases whose outcome differs, and malformed lines, naming each; the others still run; exit 1",
    async () => {
      const junit = join(tempDir(), "junit.xml")
      const r = await runCli(["test", "-c", configFile([guard, redactor]), failing, "--junit", junit])
      expect(r.code).toBe(1)
      expect(r.stdout.trimEnd().split("\n")).toEqual([
        `FAIL ${failing}:1 rm -rf is allowed (wrong)`,
        "     expected: allow",
        "     came:     deny (guard: rm -rf is not permitted here)",
        "     - expected allow, got deny",
        `FAIL ${failing}:2 denied by the wrong one`,
        "     expected: deny by redactor",
        "     came:     deny (guard: rm -rf is not permitted here)",
        "     - expected redactor among the reasons; deny by guard",
        `FAIL ${failing}:3 the wrong settled args`,
        `     expected: allow with args {"command":"cat .env"}`,
        `     came:     allow (args rewritten by redactor) args {"command":"cat .env.example"}`,
        `     - expected args {"command":"cat .env"}, got {"command":"cat .env.example"}`,
        `PASS ${failing}:4 passes between failures: allow`,
        `FAIL ${failing}:5: malformed case: invalid JSON: Unexpected token 'o', "not json" is not valid JSON`,
        `FAIL ${failing}:6: malformed case: unknown field "expected"; a call case has name, call, expect, by, args, failing`,
        `FAIL ${failing}:7 <&"'> ]]> \\x01 end`,
        "     expected: is_error false",
        `     came:     content "FATAL: no rule", is_error true, by guard`,
        "     - expected is_error false, got true",
        `7 cases: 1 passed, 6 failed (${[1, 2, 3, 5, 6, 7].map((n) => `${failing}:${n}`).join(", ")})`
      ])
      // The report a CI reads: one testcase per case, a failure in each that failed, the name whole (the control
      // character XML cannot hold written out as \u{1}).
      const report = parseJUnit(junit).testsuites
      expect([report["@_tests"], report["@_failures"], report.testsuite["@_failures"]]).toEqual(["7", "6", "6"])
      const testcases = report.testsuite.testcase
      expect(testcases.map((c) => [c["@_name"], c.failure?.["@_type"]])).toEqual([
        [`${failing}:1 rm -rf is allowed (wrong)`, "mismatch"],
        [`${failing}:2 denied by the wrong one`, "mismatch"],
        [`${failing}:3 the wrong settled args`, "mismatch"],
        [`${failing}:4 passes between failures`, undefined],
        [`${failing}:5 malformed case`, "malformed"],
        [`${failing}:6 malformed case`, "malformed"],
        [`${failing}:7 <&"'> ]]> \\u{1} end`, "mismatch"]
      ])
      expect(testcases[0]?.failure?.["@_message"]).toBe("expected allow, got deny")
      expect(testcases[0]?.failure?.["#text"]).toBe(
        "expected: allow\ncame: deny (guard: rm -rf is not permitted here)\nexpected allow, got deny"
      )
    },
    Slow
  )

  it(
    "exit 2 for an invalid config",
    async () => {
      const invalid = await runCli(["test", "-c", fixture("cli-invalid-config.json"), cases])
      expect(invalid.code).toBe(2)
    },
    Slow
  )

  it(
    "exit 64 without a cases file, or with the config and the cases both on stdin",
    async () => {
      const noCases = await runCli(["test", "-c", configFile([guard])])
      expect(noCases.code).toBe(64)
      const bothStdin = await runCli(["test", "-c", "-", "-"])
      expect(bothStdin.code).toBe(64)
      expect(bothStdin.stderr).toContain("the cases must come from a file")
    },
    Slow
  )

  it(
    "exit 1 for a file without cases: a CI job must not pass on an empty file",
    async () => {
      const empty = join(tempDir(), "empty.jsonl")
      writeFileSync(empty, "\n\n")
      const none = await runCli(["test", "-c", configFile([guard]), empty])
      expect(none.code).toBe(1)
      expect(none.stderr).toContain(`${empty} holds no case`)
    },
    Slow
  )
})
