import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"

/**
 * The house rules a reader relies on, checked: no import cycle between the source files under packages/NAME/src
 * (relative imports, type imports included: a type-only cycle still ties two files together for a reader), and no
 * source file longer than a reader can hold (one concept per file).
 */

const root = resolve(import.meta.dirname, "..", "..")
const files = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )
const sources = readdirSync(join(root, "packages")).flatMap((p) => {
  try {
    return files(join(root, "packages", p, "src"))
  } catch {
    return []
  }
})

/** The most lines a source file may have; the host's service file holds only the service, lifecycle and layers. */
const MaxLines = 300
const MaxLinesOf: Readonly<Record<string, number>> = { "packages/host/src/ExtensionHost.ts": 250 }
/** Lines as an editor numbers them: a last line without its newline counts too. */
const lineCount = (text: string): number => (text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0))

const tooLong = (): Array<string> =>
  sources.flatMap((file) => {
    const name = relative(root, file)
    const max = MaxLinesOf[name] ?? MaxLines
    const lines = lineCount(readFileSync(file, "utf8"))
    return lines > max ? [`${name}: ${lines} lines (at most ${max})`] : []
  })

const cycles = (): Array<string> => {
  const known = new Set(sources)
  const importRe = /^\s*(?:import|export)\b[^"']*?from\s+["'](\.{1,2}\/[^"']+)["']/gmu
  const edges = new Map(
    sources.map((file) => {
      const text = readFileSync(file, "utf8")
      const to = [...text.matchAll(importRe)].map((m) => resolve(dirname(file), m[1] ?? "")).filter((f) => known.has(f))
      return [file, [...new Set(to)]] as const
    })
  )

  // Tarjan's strongly connected components: every component of more than one file is (or holds) a cycle.
  let index = 0
  const indexOf = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const components: Array<Array<string>> = []
  const connect = (v: string): void => {
    indexOf.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!indexOf.has(w)) {
        connect(w)
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, indexOf.get(w) ?? 0))
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: Array<string> = []
      let w: string | undefined
      do {
        w = stack.pop()
        if (w !== undefined) {
          onStack.delete(w)
          component.push(w)
        }
      } while (w !== undefined && w !== v)
      if (component.length > 1) components.push(component)
    }
  }
  for (const file of sources) if (!indexOf.has(file)) connect(file)
  return components.map((component) =>
    component
      .map((f) => relative(root, f))
      .sort()
      .join(" <-> ")
  )
}

describe("the source tree", () => {
  it("has no import cycle between files", () => {
    expect(cycles()).toEqual([])
  })

  it("has no file over 300 lines, and ExtensionHost.ts none over 250 (one concept per file)", () => {
    expect(tooLong()).toEqual([])
  })

  it("counts lines as an editor numbers them", () => {
    expect([lineCount(""), lineCount("a"), lineCount("a\n"), lineCount("a\nb\n")]).toEqual([0, 1, 1, 2])
  })
})
