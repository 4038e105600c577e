import { spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { decodeConfig, parseConfig } from "@abhed/protocol"
import { readConfigText } from "@abhed/protocol/ConfigText"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { bin, repoRoot } from "./cli-helpers.ts"

/**
 * The documents are tested (issue 24): an example in README.md or docs/*.md that drifts from the code fails here.
 *
 * What is tested, found by reading the markdown's fenced blocks:
 * - **Configs.** Every ```json / ```jsonc block that parses (JSON with comments) to a config (an object with
 *   `extensions`, `policy`, `max_rewrite_rounds` or `builtin_tools`) or to one extension (an object with `name` and
 *   `command`, checked inside `{"extensions": [it]}`) must be accepted by the Schema (`decodeConfig`, from which
 *   docs/abhed.schema.json is generated) and by the file decoder (`parseConfig`: comments, repeated keys, lines).
 *   Blocks that do not parse (with `…` in them) and other JSON (requests, replies) are not configs.
 * - **Transcripts.** Every block whose first line starts with `$ ` is run: each `$ ` line (with the lines that
 *   continue it after a trailing `\`) is a command for bash, run in order in one shell with stderr joined to stdout;
 *   the lines up to the next `$ ` are its expected output. `abhed-ext`, `pnpm abhed-ext` and `pnpm -s abhed-ext` run
 *   this repository's CLI. Compared after masking timings (`12 ms`, `1.1 ms` → `N ms`); in the expected text a line
 *   that is `…` alone stands for any number of lines, and `…` inside a line for any text.
 * - **Commented outputs.** In a ```sh block, a command followed by `# → OUTPUT` lines is run the same way, and its
 *   output compared with those lines.
 * - **Help and tables.** Every long flag in `--help` of `run` and `check`, and the global flags, appear in the flag
 *   tables of docs/cli.md, and every flag those tables list is in `--help`; the same for `hook` and docs/hooks.md.
 *
 * Markers, HTML comments on the line right above a block (invisible when the markdown is rendered):
 * - `<!-- doc-test: skip WHY -->`: the block is not tested (say why);
 * - `<!-- doc-test: cwd=PATH -->`: the transcript runs in a fresh copy of PATH (relative to the repository root);
 *   by default it runs in the repository root;
 * - `<!-- doc-test: invalid-config -->`: the config must be rejected; if the next block is marked
 *   `<!-- doc-test: config-errors -->`, its lines are exactly the problems `parseConfig` lists (`LINE:COLUMN: …`);
 * - `<!-- doc-test: excerpt-of COMMAND -->`: the block's lines appear, in order and together, in the output of
 *   COMMAND (as a transcript's command; timings masked).
 */

export interface Block {
  readonly file: string
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly info: string
  readonly body: ReadonlyArray<string>
  /** The `doc-test:` marker right above the block, without the prefix. */
  readonly marker: string | undefined
}

const docFiles = ["README.md", ...readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]

export const blocksOf = (file: string): ReadonlyArray<Block> => {
  const lines = readFileSync(join(repoRoot, file), "utf8").split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i] ?? "")
    if (open === null) continue
    const indent = open[1]?.length ?? 0
    let end = i + 1
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end] ?? "")) end++
    let above = i - 1
    while (above >= 0 && (lines[above] ?? "").trim() === "") above--
    const marker = /^\s*<!-- doc-test: (.*?) -->\s*$/.exec(lines[above] ?? "")?.[1]
    blocks.push({
      file,
      line: i + 1,
      info: open[2] ?? "",
      body: lines.slice(i + 1, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))),
      marker
    })
    i = end
  }
  return blocks
}

const allBlocks = docFiles.flatMap(blocksOf)
const where = (b: Block) => `${b.file}:${b.line}`
const skipped = (b: Block) => b.marker?.startsWith("skip") === true

// ---------------------------------------------------------------------------------------------------------------
// Configs

const ConfigKeys = ["extensions", "policy", "max_rewrite_rounds", "builtin_tools"]

/** The config a block holds, as text: the block itself, or one extension inside a config. */
const configText = (b: Block): string | undefined => {
  if (b.info !== "json" && b.info !== "jsonc") return undefined
  const text = b.body.join("\n")
  const read = readConfigText(text)
  const value = read.value
  if (read.problems.length > 0 && b.marker !== "invalid-config") return undefined
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  if (ConfigKeys.some((k) => k in value)) return text
  if ("name" in value && "command" in value) return `{"extensions": [\n${text}\n]}`
  return undefined
}

const configBlocks = allBlocks.filter((b) => !skipped(b) && configText(b) !== undefined)

describe("docs: every config in the documents is what the decoder accepts", () => {
  it("finds the configs (the parser of the documents works)", () => {
    expect(configBlocks.length).toBeGreaterThanOrEqual(6)
  })

  it.each(configBlocks.filter((b) => b.marker !== "invalid-config").map((b) => [where(b), b] as const))(
    "%s is a valid config",
    (_, b) => {
      const text = configText(b) ?? ""
      const parsed = parseConfig(text)
      expect(Result.isSuccess(parsed) ? [] : parsed.failure.message.split("\n")).toEqual([])
      const decoded = decodeConfig(readConfigText(text).value)
      expect(Result.isSuccess(decoded) ? [] : decoded.failure.message.split("\n")).toEqual([])
    }
  )

  it.each(configBlocks.filter((b) => b.marker === "invalid-config").map((b) => [where(b), b] as const))(
    "%s is rejected, with the problems the document shows",
    (_, b) => {
      const parsed = parseConfig(configText(b) ?? "")
      expect(Result.isFailure(parsed)).toBe(true)
      const blocks = blocksOf(b.file)
      const next = blocks[blocks.findIndex((x) => x.line === b.line) + 1]
      if (next?.marker === "config-errors" && Result.isFailure(parsed)) {
        const shown = parsed.failure.issues.map((i) => `${i.line}:${i.column}: ${i.path === "" ? "" : `${i.path}: `}${i.message}`)
        expect(shown).toEqual(next.body.filter((l) => l.trim() !== ""))
      }
    }
  )
})
