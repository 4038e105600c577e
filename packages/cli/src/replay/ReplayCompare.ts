import type { AuditRecord, ContextOutcome, ToolCallOutcome, ToolResultOutcome } from "@abhed/host"
import { isJsonObject, jsonEquals } from "@abhed/protocol"
import { contextActors, isWithheld, resultActors } from "./Actors.ts"
import type { ReadRecord } from "./AuditInput.ts"

/**
 * A recorded outcome against the one the new config gives (docs/audit.md#replaying-under-a-new-config). Pure.
 *
 * Stricter and looser follow the host's own order: deny > ask > allow for a call, withheld > is_error > as
 * returned for a result, and at the same level a rewrite (of args or content) is stricter than none: it is a
 * restriction too, and losing it must not pass a gate that only fails on looser. A context is stricter when it
 * keeps a subset of what it kept, or is withheld. Anything else that differs (other reasons, another rewrite,
 * another set kept) is "changed".
 */
export type ChangeKind = "stricter" | "looser" | "changed" | "unchanged"

export interface Comparison {
  readonly kind: ChangeKind
  /** The extensions the change is down to (sorted): those that act now and did not, or the reverse when looser. */
  readonly by: ReadonlyArray<string>
  readonly before: { readonly [key: string]: unknown }
  readonly after: { readonly [key: string]: unknown }
}

const sorted = (names: Iterable<string>): ReadonlyArray<string> => [...new Set(names)].sort()
const minus = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): ReadonlyArray<string> =>
  a.filter((n) => !b.includes(n))

/** By rank, then by detail; `by` from who acts before and after. */
const classify = (
  rankBefore: number,
  rankAfter: number,
  same: boolean,
  actorsBefore: ReadonlyArray<string>,
  actorsAfter: ReadonlyArray<string>
): { readonly kind: ChangeKind; readonly by: ReadonlyArray<string> } => {
  const kind: ChangeKind =
    rankAfter > rankBefore ? "stricter" : rankAfter < rankBefore ? "looser" : same ? "unchanged" : "changed"
  if (kind === "unchanged") return { kind, by: [] }
  const gained = minus(actorsAfter, actorsBefore)
  const lost = minus(actorsBefore, actorsAfter)
  const by = kind === "stricter" ? gained : kind === "looser" ? lost : sorted([...gained, ...lost])
  // The same extensions, acting otherwise (another reason, another rewrite): the change is theirs.
  return { kind, by: by.length > 0 ? sorted(by) : sorted(kind === "looser" ? actorsBefore : actorsAfter) }
}

const DecisionRank: { readonly [decision: string]: number } = { allow: 0, ask: 1, deny: 2 }

/** A call's recorded outcome; undefined when it is not one (a record from another tool, or edited). */
const recordedCall = (outcome: unknown) => {
  if (!isJsonObject(outcome)) return undefined
  const { args, decision, reasons, rewrittenBy } = outcome
  if (typeof decision !== "string" || !(decision in DecisionRank) || !Array.isArray(reasons) || !isJsonObject(args))
    return undefined
  const names = reasons.flatMap((r) => (isJsonObject(r) && typeof r["extension"] === "string" ? [r["extension"]] : []))
  const rewriters = Array.isArray(rewrittenBy) ? rewrittenBy.filter((n): n is string => typeof n === "string") : []
  return { decision, reasons, args, names, rewriters }
}

export const compareCall = (record: ReadRecord, after: ToolCallOutcome): Comparison | undefined => {
  const before = recordedCall(record.outcome)
  if (before === undefined) return undefined
  const rewritersAfter = after.rewrittenBy ?? []
  const rank = (decision: string, rewriters: ReadonlyArray<string>) =>
    (DecisionRank[decision] ?? 0) * 2 + (rewriters.length > 0 ? 1 : 0)
  // Who rewrote is part of the decision: the same args from another extension is a change, never "unchanged".
  const same =
    jsonEquals(before.reasons, after.reasons) &&
    jsonEquals(before.args, after.args) &&
    jsonEquals(before.rewriters, rewritersAfter)
  const { by, kind } = classify(
    rank(before.decision, before.rewriters),
    rank(after.decision, rewritersAfter),
    same,
    sorted([...before.names, ...before.rewriters]),
    sorted([...after.reasons.map((r) => r.extension), ...rewritersAfter])
  )
  return {
    kind,
    by,
    before: { decision: before.decision, reasons: before.reasons, args: before.args, rewritten_by: before.rewriters },
    after: { decision: after.decision, reasons: after.reasons, args: after.args, rewritten_by: rewritersAfter }
  }
}

/** The recorded outcome of a result or a context, as far as a comparison reads it. */
const field = (outcome: unknown, name: string): unknown => (isJsonObject(outcome) ? outcome[name] : undefined)

export const compareResult = (
  record: ReadRecord,
  input: { readonly content: string; readonly isError: boolean },
  after: ToolResultOutcome,
  afterRecord: AuditRecord | undefined
): Comparison => {
  // The recorded outcome is full content (a replayable record is one recorded in full: ReplayPlan.ts).
  const recorded = field(record.outcome, "content")
  const before = {
    content: typeof recorded === "string" ? recorded : input.content,
    is_error: field(record.outcome, "is_error") === true
  }
  // A tool may return `[withheld: …]` itself: withheld is the host's only when the content is not what came in.
  const withheldOf = (o: { readonly content: string; readonly is_error: boolean }) =>
    isWithheld(o) && o.content !== input.content
  const withheldBefore = withheldOf(before)
  const withheldAfter = withheldOf(after)
  const actorsBefore = resultActors(record, input.content, withheldBefore)
  const actorsAfter = afterRecord === undefined ? [] : resultActors(afterRecord, input.content, withheldAfter)
  const rank = (o: { content: string; is_error: boolean }, withheld: boolean) =>
    (withheld ? 2 : o.is_error ? 1 : 0) * 2 + (o.content !== input.content ? 1 : 0)
  const { by, kind } = classify(
    rank(before, withheldBefore),
    rank(after, withheldAfter),
    before.content === after.content && before.is_error === after.is_error && jsonEquals(actorsBefore, actorsAfter),
    actorsBefore,
    actorsAfter
  )
  return {
    kind,
    by,
    before: { ...before, by: actorsBefore },
    after: { content: after.content, is_error: after.is_error, by: actorsAfter }
  }
}

const indices = (value: unknown): ReadonlyArray<number> =>
  Array.isArray(value) ? value.filter((i): i is number => typeof i === "number") : []

export const compareContext = (
  record: ReadRecord,
  messages: number,
  after: ContextOutcome,
  afterRecord: AuditRecord | undefined
): Comparison => {
  const withheldList = field(record.outcome, "withheld")
  const recordedWithheld: ReadonlyArray<unknown> = Array.isArray(withheldList) ? withheldList : []
  const withheldBefore = recordedWithheld.length > 0
  const withheldAfter = after.withheld.length > 0
  // A record without a keep (an older one) kept every message.
  const recordedKeep = field(record.outcome, "keep")
  const keptBefore = withheldBefore
    ? []
    : Array.isArray(recordedKeep)
      ? indices(recordedKeep)
      : Array.from({ length: messages }, (_, i) => i)
  const keptAfter = withheldAfter ? [] : after.keep
  const actorsBefore = contextActors(record, withheldBefore)
  const actorsAfter = afterRecord === undefined ? [] : contextActors(afterRecord, withheldAfter)
  const subset = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => a.every((i) => b.includes(i))
  const same =
    jsonEquals(keptBefore, keptAfter) &&
    jsonEquals(recordedWithheld, after.withheld) &&
    jsonEquals(actorsBefore, actorsAfter)
  // Withheld is above any keep; otherwise keeping a subset of what was kept is stricter, a superset looser.
  const [rankBefore, rankAfter] =
    withheldBefore !== withheldAfter
      ? [withheldBefore ? 1 : 0, withheldAfter ? 1 : 0]
      : withheldBefore || jsonEquals(keptBefore, keptAfter)
        ? [0, 0]
        : subset(keptAfter, keptBefore)
          ? [0, 1]
          : subset(keptBefore, keptAfter)
            ? [1, 0]
            : [0, 0]
  const { by, kind } = classify(rankBefore, rankAfter, same, actorsBefore, actorsAfter)
  return {
    kind,
    by,
    before: { keep: keptBefore, withheld: recordedWithheld, by: actorsBefore },
    after: { keep: keptAfter, withheld: after.withheld, by: actorsAfter }
  }
}
