import { printable } from "@abhed/host/Printable"
import { canonicalJson, isJsonObject } from "@abhed/protocol"
import { excerpts } from "../Excerpts.ts"
import type { Style } from "../Style.ts"
import type { Malformed } from "./AuditInput.ts"
import type { ChangeKind, Comparison } from "./ReplayCompare.ts"
import { jsonLine } from "../JsonText.ts"

/**
 * What `replay` found, and how it is printed (docs/cli.md#abhed-ext-replay): text for people, one JSON document with
 * --json. Pure. An audit file may be anyone's text, and the new reasons are the extensions': in the text, every
 * value from them is shown escaped (`printable`), so none can drive the terminal (retitle it, clear the lines that
 * matter, write the clipboard).
 */

export interface Replayed {
  readonly where: string
  readonly session_id: string
  readonly seq: number
  readonly event: string
  readonly call_id: string | undefined
  readonly tool: string | undefined
  readonly comparison: Comparison
  /** The extensions that did not answer in the replay (their on_failure answered for them), each with why. */
  readonly failed?: ReadonlyArray<string> | undefined
}

export interface Skipped {
  readonly where: string
  readonly event: string
  readonly call_id: string | undefined
  readonly reason: string
}

export interface ReplayResult {
  readonly config: string
  readonly replayed: ReadonlyArray<Replayed>
  readonly notReplayable: ReadonlyArray<Skipped>
  readonly malformed: ReadonlyArray<Malformed>
}

export interface Summary {
  readonly replayed: number
  readonly stricter: number
  readonly looser: number
  readonly changed: number
  readonly unchanged: number
  readonly not_replayable: number
  readonly malformed: number
  /** Replayed events in which an extension did not answer: their outcome is partly its on_failure's. */
  readonly unanswered: number
  /** Per extension, the changes it is named in. */
  readonly by: { readonly [extension: string]: { stricter: number; looser: number; changed: number } }
}

const unanswered = (r: ReplayResult): ReadonlyArray<Replayed> => r.replayed.filter((x) => (x.failed ?? []).length > 0)

export const summarize = (r: ReplayResult): Summary => {
  const count = (kind: ChangeKind) => r.replayed.filter((x) => x.comparison.kind === kind).length
  const by: Record<string, { stricter: number; looser: number; changed: number }> = {}
  for (const x of r.replayed) {
    const kind = x.comparison.kind
    if (kind === "unchanged") continue
    for (const name of x.comparison.by) (by[name] ??= { stricter: 0, looser: 0, changed: 0 })[kind]++
  }
  return {
    replayed: r.replayed.length,
    stricter: count("stricter"),
    looser: count("looser"),
    changed: count("changed"),
    unchanged: count("unchanged"),
    not_replayable: r.notReplayable.length,
    malformed: r.malformed.length,
    unanswered: unanswered(r).length,
    by: Object.fromEntries(Object.entries(by).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  }
}

export const renderJson = (r: ReplayResult): string =>
  jsonLine({
    config: r.config,
    summary: summarize(r),
    changes: r.replayed
      .filter((x) => x.comparison.kind !== "unchanged")
      .map((x) => ({
        where: x.where,
        session_id: x.session_id,
        seq: x.seq,
        event: x.event,
        ...(x.call_id === undefined ? {} : { call_id: x.call_id }),
        ...(x.tool === undefined ? {} : { tool: x.tool }),
        change: x.comparison.kind,
        by: x.comparison.by,
        before: x.comparison.before,
        after: x.comparison.after,
        ...((x.failed ?? []).length === 0 ? {} : { failed: x.failed })
      })),
    unanswered: unanswered(r).map((x) => ({
      where: x.where,
      event: x.event,
      ...(x.call_id === undefined ? {} : { call_id: x.call_id }),
      change: x.comparison.kind,
      failed: x.failed
    })),
    not_replayable: r.notReplayable.map((s) => ({
      where: s.where,
      event: s.event,
      ...(s.call_id === undefined ? {} : { call_id: s.call_id }),
      reason: s.reason
    })),
    malformed: r.malformed
  })

/** One side of a change, on one line: the decision and its reasons, then the args (or content, or keep). */
const side = (event: string, s: { readonly [key: string]: unknown }, whole = false): string => {
  const short = (text: string, max = 300): string =>
    whole || text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`
  const json = (value: unknown): string => short(canonicalJson(value))
  const by = Array.isArray(s["by"]) && s["by"].length > 0 ? ` by ${s["by"].join(", ")}` : ""
  switch (event) {
    case "tool_call": {
      const reasons = Array.isArray(s["reasons"])
        ? s["reasons"]
            .map((r) => (isJsonObject(r) ? `${String(r["extension"])}: ${short(String(r["reason"]), 200)}` : json(r)))
            .join("; ")
        : ""
      const rewriters =
        Array.isArray(s["rewritten_by"]) && s["rewritten_by"].length > 0
          ? `, rewritten by ${s["rewritten_by"].join(", ")}`
          : ""
      return `${String(s["decision"])}${reasons === "" ? "" : ` (${reasons})`}, args ${json(s["args"])}${rewriters}`
    }
    case "tool_result":
      return `content ${short(JSON.stringify(s["content"]))}, is_error ${String(s["is_error"])}${by}`
    default: {
      const withheld =
        Array.isArray(s["withheld"]) && s["withheld"].length > 0 ? `, withheld (${json(s["withheld"])})` : ""
      return `keep ${json(s["keep"])}${withheld}${by}`
    }
  }
}

/** At most this many not-replayable or malformed lines in the text report; --json lists them all. */
export const TextListLimit = 50

export const renderText = (r: ReplayResult, style: Style): string => {
  const lines: Array<string> = []
  const paint = { stricter: style.red, looser: style.yellow, changed: style.cyan, unchanged: style.dim }
  for (const x of r.replayed) {
    const c = x.comparison
    if (c.kind === "unchanged") continue
    const what = [x.event, x.call_id, x.tool].filter((s) => s !== undefined).join(" ")
    // Each value cut short, two sides that differ past the cut would read the same but for their lengths: then
    // both are cut around where they first differ.
    const uncounted = (text: string) => text.replaceAll(/… \(\d+ chars\)/g, "…")
    const cut = [side(x.event, c.before), side(x.event, c.after)] as const
    const [before, after] =
      uncounted(cut[0]) === uncounted(cut[1])
        ? excerpts(side(x.event, c.before, true), side(x.event, c.after, true), 600)
        : cut
    lines.push(
      `${paint[c.kind](c.kind)} ${printable(`${x.where} ${what} (session ${x.session_id})${c.by.length > 0 ? ` by ${c.by.join(", ")}` : ""}`)}`,
      `  before: ${printable(before)}`,
      `  after:  ${printable(after)}`,
      ...(x.failed ?? []).map((f) => `  ${printable(`${f}: its on_failure decided for it`)}`)
    )
  }
  const list = (title: string, items: ReadonlyArray<string>) => {
    if (items.length === 0) return
    lines.push(`${title}:`, ...items.slice(0, TextListLimit).map((s) => `  ${printable(s)}`))
    if (items.length > TextListLimit) lines.push(`  … and ${items.length - TextListLimit} more (--json lists them all)`)
  }
  list(
    "not replayable",
    r.notReplayable.map(
      (s) => `${s.where} ${[s.event, s.call_id].filter((p) => p !== undefined).join(" ")}: ${s.reason}`
    )
  )
  list(
    "decided in part by on_failure (an extension did not answer)",
    unanswered(r).map(
      (x) =>
        `${x.where} ${[x.event, x.call_id].filter((p) => p !== undefined).join(" ")} (${x.comparison.kind}): ${(x.failed ?? []).join("; ")}`
    )
  )
  list(
    "malformed",
    r.malformed.map((m) => `${m.where}: ${m.problem}`)
  )
  const s = summarize(r)
  const byText = (kind: "stricter" | "looser" | "changed") => {
    const names = Object.entries(s.by)
      .filter(([, n]) => n[kind] > 0)
      .map(([name, n]) => `${name}: ${n[kind]}`)
    return names.length > 0 ? ` (${names.join(", ")})` : ""
  }
  lines.push(
    printable(
      `replayed ${s.replayed} event${s.replayed === 1 ? "" : "s"} under ${r.config}: ` +
        `${s.stricter} stricter${byText("stricter")}, ${s.looser} looser${byText("looser")}, ` +
        `${s.changed} changed${byText("changed")}, ${s.unchanged} unchanged; ${s.not_replayable} not replayable` +
        (s.malformed > 0 ? `; ${s.malformed} malformed` : "") +
        (s.unanswered > 0 ? `; ${s.unanswered} decided in part by on_failure` : "")
    )
  )
  return lines.join("\n")
}
