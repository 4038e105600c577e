import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * `pnpm test:cpu`'s table: the per-file lines test/support/cpu-usage.setup.ts wrote, dearest first, with the totals.
 * `node test/support/cpu-report.ts [FILE]` (default: `$ABHED_TEST_CPU_OUT`, else node_modules/.cache/test-cpu.jsonl, as
 * vitest.cpu.config.ts writes).
 */

export interface FileCpu {
  readonly file: string
  readonly self: number
  readonly children: number
  readonly childrenSystem: number
  readonly wall: number
  readonly spawns: Readonly<Record<string, number>>
}

const isFileCpu = (x: unknown): x is FileCpu =>
  typeof x === "object" &&
  x !== null &&
  "file" in x &&
  typeof x.file === "string" &&
  "self" in x &&
  typeof x.self === "number" &&
  "children" in x &&
  typeof x.children === "number" &&
  "wall" in x &&
  typeof x.wall === "number"

/** The lines of a report file, each a file's account; a line that is not one is named, with its number. */
export const parse = (text: string): { readonly rows: ReadonlyArray<FileCpu>; readonly bad: ReadonlyArray<number> } => {
  const rows: Array<FileCpu> = []
  const bad: Array<number> = []
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return
    try {
      const value: unknown = JSON.parse(line)
      if (isFileCpu(value)) rows.push(value)
      else bad.push(i + 1)
    } catch {
      bad.push(i + 1)
    }
  })
  return { rows, bad }
}

/** The table: CPU (worker + children), the two parts, wall, file, and its three most started commands. */
export const table = (rows: ReadonlyArray<FileCpu>): string => {
  const sorted = [...rows].sort((a, b) => b.self + b.children - (a.self + a.children))
  const total = (f: (r: FileCpu) => number) => rows.reduce((sum, r) => sum + f(r), 0).toFixed(1)
  const lines = sorted.map((r) => {
    const top = Object.entries(r.spawns ?? {})
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([command, n]) => `${command} ×${n}`)
      .join(", ")
    const cells = [r.self + r.children, r.self, r.children, r.wall].map((n) => n.toFixed(1).padStart(6))
    return `${cells.join(" ")}  ${r.file}${top === "" ? "" : `  (${top})`}`
  })
  return [
    `   cpu   self  child   wall  file  (processes started, most first)`,
    ...lines,
    `total: ${total((r) => r.self + r.children)} s of CPU (workers ${total((r) => r.self)}, started processes ${total((r) => r.children)}), ${rows.length} files`
  ].join("\n")
}

if (import.meta.filename === NodePath.resolve(process.argv[1] ?? "")) {
  const path =
    process.argv[2] ??
    process.env["ABHED_TEST_CPU_OUT"] ??
    NodePath.join(import.meta.dirname, "..", "..", "node_modules", ".cache", "test-cpu.jsonl")
  const { bad, rows } = parse(NodeFs.readFileSync(path, "utf8"))
  process.stdout.write(`${table(rows)}\n`)
  if (bad.length > 0) process.stderr.write(`${path}: lines ${bad.join(", ")} are not a file's account\n`)
}
