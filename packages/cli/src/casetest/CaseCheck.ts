import type { AuditRecord, ToolCallOutcome, ToolResultOutcome } from "@abhed/host"
import { canonicalJson, jsonEquals } from "@abhed/protocol"
import { excerpt, excerpts } from "../Excerpts.ts"
import { failedExtensions, failuresOf, isWithheld, resultActors } from "../replay/Actors.ts"
import type { CallCase, ResultCase } from "./TestCase.ts"

/**
 * Whether what came of a case is what it expects (docs/cli.md#abhed-ext-test). Pure: the case, the host's outcome and
 * the dispatch's audit record in; what was expected, what came, and each mismatch out.
 */
export interface CaseVerdict {
  readonly passed: boolean
  /** What the case expects, in a few words: `deny by guard`. */
  readonly expected: string
  /** What came, in the same words, with the reasons. */
  readonly came: string
  /** One line per mismatch; empty when passed. */
  readonly problems: ReadonlyArray<string>
}

const names = (list: ReadonlyArray<string>): string => list.join(", ")
const short = (text: string): string => excerpt(text, 200)
const missingFrom = (wanted: ReadonlyArray<string>, got: ReadonlyArray<string>): ReadonlyArray<string> =>
  wanted.filter((name) => !got.includes(name))

export const checkCall = (c: CallCase, outcome: ToolCallOutcome): CaseVerdict => {
  const problems: Array<string> = []
  // deny and ask name who in their reasons; an allow names nobody, but a rewrite still has its authors.
  const actors =
    outcome.decision === "allow"
      ? [...new Set(outcome.rewrittenBy ?? [])].sort()
      : [...new Set(outcome.reasons.map((r) => r.extension))]
  if (outcome.decision !== c.expect) problems.push(`expected ${c.expect}, got ${outcome.decision}`)
  // Who decided is checked only when the decision is the expected one: otherwise that mismatch says it all.
  const absent = outcome.decision === c.expect ? missingFrom(c.by, actors) : []
  if (absent.length > 0) {
    problems.push(
      outcome.decision === "allow"
        ? `expected a rewrite by ${names(absent)}; ${actors.length === 0 ? "nobody rewrote the args" : `rewritten by ${names(actors)}`}`
        : `expected ${names(absent)} among the reasons; ${outcome.decision} by ${names(actors)}`
    )
  }
  if (c.settled !== undefined && !jsonEquals(c.settled, outcome.args)) {
    const [want, got] = excerpts(canonicalJson(c.settled), canonicalJson(outcome.args), 200)
    problems.push(`expected args ${want}, got ${got}`)
  }
  const expectedArgs = c.settled === undefined ? "" : ` with args ${short(canonicalJson(c.settled))}`
  const reasons = outcome.reasons.map((r) => `${r.extension}: ${short(r.reason)}`).join("; ")
  const rewrote =
    (outcome.rewrittenBy ?? []).length > 0 ? ` (args rewritten by ${names(outcome.rewrittenBy ?? [])})` : ""
  return {
    passed: problems.length === 0,
    expected: `${c.expect}${c.by.length > 0 ? ` by ${names(c.by)}` : ""}${expectedArgs}`,
    came:
      `${outcome.decision}${reasons === "" ? "" : ` (${reasons})`}${rewrote}` +
      (c.settled !== undefined || rewrote !== "" ? ` args ${short(canonicalJson(outcome.args))}` : ""),
    problems
  }
}

export const checkResult = (
  c: ResultCase,
  outcome: ToolResultOutcome,
  record: AuditRecord | undefined
): CaseVerdict => {
  const problems: Array<string> = []
  const actors = record === undefined ? [] : resultActors(record, c.content, isWithheld(outcome))
  if (c.expectContent !== undefined && c.expectContent !== outcome.content) {
    const [want, got] = excerpts(c.expectContent, outcome.content, 200)
    problems.push(`expected content ${JSON.stringify(want)}, got ${JSON.stringify(got)}`)
  }
  if (c.expectIsError !== undefined && c.expectIsError !== outcome.is_error) {
    problems.push(`expected is_error ${c.expectIsError}, got ${outcome.is_error}`)
  }
  const absent = missingFrom(c.by, actors)
  if (absent.length > 0) {
    problems.push(
      `expected ${names(absent)} to act on the result; ${actors.length === 0 ? "nobody did" : `acted: ${names(actors)}`}`
    )
  }
  const expected = [
    c.expectContent === undefined ? undefined : `content ${JSON.stringify(short(c.expectContent))}`,
    c.expectIsError === undefined ? undefined : `is_error ${c.expectIsError}`,
    c.by.length === 0 ? undefined : `by ${names(c.by)}`
  ]
    .filter((s) => s !== undefined)
    .join(", ")
  return {
    passed: problems.length === 0,
    expected,
    came:
      `content ${JSON.stringify(short(outcome.content))}, is_error ${outcome.is_error}` +
      (actors.length > 0 ? `, by ${names(actors)}` : ""),
    problems
  }
}

/**
 * A case is a test of the extensions' answers: one that failed (timed out, exited, dead, spoke garbage) answered
 * with its `on_failure` instead, which can match what the case expects (a dead guard under `on_failure: deny`
 * denies everything). Each such failure fails the case, whatever came of it, unless the case names the extension
 * in `failing` (a test of the on_failure itself); then it must have failed.
 */
export const withFailures = (
  verdict: CaseVerdict,
  record: AuditRecord | undefined,
  failing: ReadonlyArray<string> = []
): CaseVerdict => {
  const failed = failedExtensions(record)
  const problems = [
    ...failuresOf(record, failing).map((f) => `${f}: its on_failure decided for it`),
    ...missingFrom(failing, failed).map((name) => `expected ${name} to fail; it did not`)
  ]
  const expected =
    failing.length === 0
      ? verdict.expected
      : `${verdict.expected}${verdict.expected === "" ? "" : ", "}${names(failing)} failing`
  return problems.length === 0
    ? { ...verdict, expected }
    : { ...verdict, expected, passed: false, problems: [...verdict.problems, ...problems] }
}

/**
 * A case no extension saw (none subscribed to its event, or every matcher left it out) was decided by the policy
 * alone: said with what came, so a pass that no guard took part in reads as one.
 */
export const withSeen = (verdict: CaseVerdict, record: AuditRecord | undefined): CaseVerdict => {
  const seen = (record?.rounds ?? []).some((round) =>
    round.exchanges.some((x) => x.status !== "not_subscribed" && x.status !== "not_matched")
  )
  return seen || record === undefined ? verdict : { ...verdict, came: `${verdict.came} (seen by no extension)` }
}
