import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"

/**
 * The documents' links lead somewhere: every relative link in README.md and docs/*.md names a file or folder that
 * exists, and its `#anchor` a heading of the target (as GitHub makes anchors of headings). docs/guarantees.md's test
 * references name tests that exist: each “name” after a link to a test file is in that file.
 */

const root = resolve(import.meta.dirname, "..", "..")
const documents = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`)
]

interface Line {
  readonly number: number
  /** The line with its code spans blanked out (a link or a quote inside code is not one). */
  readonly text: string
  /** The line as written, for headings (whose code spans count toward the anchor). */
  readonly raw: string
}

/** The lines of a Markdown file outside fenced code blocks. */
const prose = (markdown: string): Array<Line> => {
  const lines: Array<Line> = []
  let fence: string | undefined
  markdown.split("\n").forEach((raw, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1]
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined
      return
    }
    if (fence === undefined)
      lines.push({ number: i + 1, text: raw.replace(/(`+)[^`]*?\1/g, (m) => " ".repeat(m.length)), raw })
  })
  return lines
}

/**
 * GitHub's anchor for a heading: its text (a link's text, not its address) lowercased, every character that is not
 * a letter, a digit, a space, `-` or `_` removed, spaces turned into `-`.
 */
const slug = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]*>/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")

/** The anchors of a Markdown file's headings; a repeated heading's get `-1`, `-2`, … as on GitHub. */
const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const { raw } of prose(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(raw)?.[1]
    if (heading === undefined) continue
    const base = slug(heading)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

interface Link {
  readonly from: string
  readonly line: number
  readonly target: string
}

/** The inline links and images of a document (`[text](target)`), without the external ones. */
const linksOf = (document: string): Array<Link> =>
  prose(readFileSync(join(root, document), "utf8")).flatMap(({ number, text }) =>
    [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].flatMap((m) => {
      const target = m[1] ?? ""
      return /^[a-z][a-z0-9+.-]*:/i.test(target) ? [] : [{ from: document, line: number, target }]
    })
  )

/** What is wrong with a link, or undefined when it leads to an existing file and heading. */
const problemOf = (link: Link): string | undefined => {
  const [path = "", anchor] = link.target.split("#", 2)
  const file = path === "" ? join(root, link.from) : resolve(dirname(join(root, link.from)), decodeURIComponent(path))
  if (!existsSync(file)) return `${relative(root, file)} does not exist`
  if (anchor === undefined || anchor === "" || !file.endsWith(".md")) return undefined
  return anchorsOf(readFileSync(file, "utf8")).has(decodeURIComponent(anchor))
    ? undefined
    : `${relative(root, file)} has no heading whose anchor is #${anchor}`
}

describe("the documents' links", () => {
  it("slugs headings as GitHub does", () => {
    expect(slug("The final decision: policy joined with the verdict")).toBe(
      "the-final-decision-policy-joined-with-the-verdict"
    )
    expect(slug("`tool_call`: the verdict")).toBe("tool_call-the-verdict")
    expect(slug("Settling rewrites (`tool_call` args, `tool_result` content)")).toBe(
      "settling-rewrites-tool_call-args-tool_result-content"
    )
    expect(slug("`abhed-ext run`")).toBe("abhed-ext-run")
    expect(slug("What the agent sees: `on_failure`")).toBe("what-the-agent-sees-on_failure")
    expect(slug("See [the protocol](protocol.md) – twice")).toBe("see-the-protocol--twice")
  })

  it("finds the links of every document, and tells a broken one", () => {
    const links = documents.flatMap(linksOf)
    // Enough links to be worth checking: a parser that finds none would pass anything.
    expect(links.length).toBeGreaterThan(50)
    expect(problemOf({ from: "docs/design.md", line: 0, target: "semantics.md#no-such-heading" })).toContain(
      "#no-such-heading"
    )
    expect(problemOf({ from: "docs/design.md", line: 0, target: "nothing-here.md" })).toContain("does not exist")
    expect(problemOf({ from: "docs/design.md", line: 0, target: "#the-one-rule" })).toBeUndefined()
  })

  it("every relative link in README.md and docs/*.md resolves: the file exists, and so does the heading it names", () => {
    const broken = documents.flatMap(linksOf).flatMap((link) => {
      const problem = problemOf(link)
      return problem === undefined ? [] : [`${link.from}:${link.line}: (${link.target}) ${problem}`]
    })
    expect(broken).toEqual([])
  })
})

/**
 * docs/guarantees.md's test references: a link to a test file, then the “names” of tests in it, up to the next link
 * (on the same line or the lines after it; a blank line or a heading ends them).
 */
const testReferences = (): Array<{ readonly line: number; readonly file: string; readonly name: string }> => {
  const references: Array<{ line: number; file: string; name: string }> = []
  let file: string | undefined
  for (const { number, text } of prose(readFileSync(join(root, "docs/guarantees.md"), "utf8"))) {
    if (text.trim() === "" || text.startsWith("#")) file = undefined
    for (const part of text.split(/(?=\[[^\]]*\]\()/)) {
      const link = /^\[[^\]]*\]\(([^)]*)\)/.exec(part)?.[1]
      if (link !== undefined) file = link.endsWith(".test.ts") ? resolve(root, "docs", link) : undefined
      if (file === undefined) continue
      for (const m of part.matchAll(/“([^”]+)”/g)) references.push({ line: number, file, name: m[1] ?? "" })
    }
  }
  return references
}

describe("README.md: where a newcomer starts", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8")

  it("links every document in docs/", () => {
    const docs = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"))
    expect(docs.filter((f) => !readme.includes(`(docs/${f}`))).toEqual([])
  })

  it("names every command of abhed-ext --help where it points to docs/cli.md", () => {
    const help = spawnSync(process.execPath, [join(root, "packages/cli/src/bin.ts"), "--help"], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" }
    }).stdout
    const lines = help.split("\n")
    const from = lines.indexOf("SUBCOMMANDS")
    const to = lines.findIndex((l, i) => i > from && !l.startsWith("  "))
    const commands = lines
      .slice(from + 1, to)
      .map((l) => /^ {2}([a-z-]+)\s/.exec(l)?.[1])
      .filter((c) => c !== undefined)
    expect(commands.length).toBeGreaterThan(5)
    const pointer = /- \[docs\/cli\.md\]\(docs\/cli\.md\): `abhed-ext ([^`]*)`/.exec(readme)?.[1] ?? ""
    const named = pointer.split(/\s*\|\s*/)
    expect(commands.filter((c) => !named.includes(c))).toEqual([])
  })
})

describe("docs/guarantees.md", () => {
  it("names tests that exist: each name is in the test file linked before it", () => {
    const references = testReferences()
    // Every guarantee has its tests: dozens of names, each checked below.
    expect(references.length).toBeGreaterThan(40)
    const missing = references.flatMap(({ file, line, name }) =>
      existsSync(file) && readFileSync(file, "utf8").includes(name)
        ? []
        : [`docs/guarantees.md:${line}: ${relative(root, file)} has no test “${name}”`]
    )
    expect(missing).toEqual([])
  })

  it("gives every guarantee its section in the docs and at least one test", () => {
    const sections = readFileSync(join(root, "docs/guarantees.md"), "utf8").split(/^## /m).slice(1)
    expect(sections.length).toBeGreaterThan(10)
    const lacking = sections.flatMap((section) => {
      const title = section.split("\n", 1)[0] ?? ""
      const statedIn =
        /\]\((?:design|semantics|failures|protocol|cli|extensions|configuration|embedding|hooks)\.md#/.test(section)
      const tested = /\]\([^)]+\.test\.ts\)[^[]*“/.test(section)
      return statedIn && tested
        ? []
        : [
            `${title}: ${statedIn ? "" : "no section linked"}${!statedIn && !tested ? ", " : ""}${tested ? "" : "no test named"}`
          ]
    })
    expect(lacking).toEqual([])
  })
})
