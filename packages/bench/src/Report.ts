import { ratio, type Summary } from "./Stats.ts"

/**
 * What a run produces: one row per (scenario, metric), and the machine it ran on. Pure: building rows, the JSON
 * document (`--json`) and the table printed on stdout.
 */

export interface Row {
  /** The scenario, e.g. "1. sequential tool_call, 1 no-op ext". */
  readonly name: string
  /** What is compared, e.g. "p50" or "throughput". */
  readonly metric: string
  readonly host: number
  readonly raw: number
  /** host/raw; null when the baseline is zero or missing. */
  readonly ratio: number | null
  /** The largest acceptable ratio (docs/design.md#performance-budget), or null when the scenario has none. */
  readonly budget: number | null
  readonly unit: string
}

export interface Machine {
  readonly os: string
  readonly arch: string
  readonly cpus: number
  readonly cpu_model: string
  readonly memory_mib: number
  readonly node: string
  /** 1-minute load average when the run started: a busy machine widens every figure. */
  readonly load_avg_1m: number
  /** "quick" (`--quick`, smaller counts) or "full". */
  readonly mode: "quick" | "full"
}

export interface Document {
  readonly machine: Machine
  readonly scenarios: ReadonlyArray<Row>
}

export const row = (fields: Omit<Row, "ratio">): Row => ({
  name: fields.name,
  metric: fields.metric,
  host: fields.host,
  raw: fields.raw,
  ratio: ratio(fields.host, fields.raw),
  budget: fields.budget,
  unit: fields.unit
})

/** A latency comparison's two rows: p50 (judged against `budget`) and p99 (no budget), in milliseconds. */
export const latencyRows = (name: string, host: Summary, raw: Summary, budget: number | null): Array<Row> => [
  row({ name, metric: "p50", host: host.p50, raw: raw.p50, budget, unit: "ms" }),
  row({ name, metric: "p99", host: host.p99, raw: raw.p99, budget: null, unit: "ms" })
]

/** Within budget (ratio ≤ budget), over it, or no budget to meet. */
export type Verdict = "ok" | "OVER" | "-"

export const verdict = (r: Row): Verdict =>
  r.budget === null ? "-" : r.ratio !== null && r.ratio <= r.budget ? "ok" : "OVER"

export const document = (machine: Machine, rows: ReadonlyArray<Row>): Document => ({ machine, scenarios: rows })

/** Round to 4 significant digits for JSON: enough to compare runs, without float noise. */
const round = (x: number): number => (Number.isFinite(x) ? Number(x.toPrecision(4)) : x)

/** The `--json` output: one JSON document. Non-finite numbers become null (JSON has no NaN). */
export const toJson = (doc: Document): string =>
  JSON.stringify(
    {
      machine: doc.machine,
      scenarios: doc.scenarios.map((r) => ({
        name: r.name,
        metric: r.metric,
        host: Number.isFinite(r.host) ? round(r.host) : null,
        raw: Number.isFinite(r.raw) ? round(r.raw) : null,
        ratio: r.ratio === null ? null : round(r.ratio),
        budget: r.budget,
        unit: r.unit
      }))
    },
    null,
    2
  )

const fmt = (x: number): string =>
  !Number.isFinite(x)
    ? "n/a"
    : Math.abs(x) >= 1000
      ? x.toFixed(0)
      : Math.abs(x) >= 100
        ? x.toFixed(1)
        : Math.abs(x) >= 1
          ? x.toFixed(2)
          : x.toPrecision(3)

export const describeMachine = (m: Machine): string =>
  `${m.cpus} × ${m.cpu_model}, ${m.memory_mib} MiB, ${m.os} ${m.arch}, node ${m.node}, load ${m.load_avg_1m.toFixed(2)}, ${m.mode} run`

/** A plain-text table, columns padded to their widest cell. */
export const toTable = (doc: Document): string => {
  const header = ["scenario", "metric", "host", "raw", "host/raw", "budget", "", "unit"]
  const cells = doc.scenarios.map((r) => [
    r.name,
    r.metric,
    fmt(r.host),
    fmt(r.raw),
    r.ratio === null ? "n/a" : r.ratio.toFixed(3),
    r.budget === null ? "-" : `≤ ${r.budget}`,
    verdict(r),
    r.unit
  ])
  const all = [header, ...cells]
  const widths = header.map((_, i) => Math.max(...all.map((c) => (c[i] ?? "").length)))
  const numeric = new Set([2, 3, 4])
  const line = (c: ReadonlyArray<string>) =>
    c
      .map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd()
  return [
    `machine: ${describeMachine(doc.machine)}`,
    "",
    line(header),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...cells.map(line)
  ].join("\n")
}
