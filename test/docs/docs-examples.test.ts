import { spawn, spawnSync } from "node:child_process"
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { decodeConfig, parseConfig } from "@abhed/protocol"
import { readConfigText } from "@abhed/protocol/ConfigText"
import { Result } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { bin, repoRoot, runProcess } from "../support/cli-helpers.ts"

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
 * - **TypeScript.** Every ```ts block type-checks as a module of its own, with the workspace's strict settings, and
 *   runs: one that calls `Extension.main` answers a `tool_call` of `rm` on stdin with a block (as the examples
 *   do), any other loads and exits 0. docs/embedding.md's blocks are excerpts of docs/embedding/agent.ts, which
 *   `pnpm typecheck` checks and test/host/embedding.test.ts runs.
 * - **Help and tables.** Every long flag in `--help` of `run`, `check`, `audit`, `replay`, `import-mcp` and `mcp`, and
 *   the global flags, appear in the flag tables of docs/cli.md, and every flag those tables list is in `--help`; the
 *   same for `hook` and docs/hooks.md. Every command `abhed-ext --help` lists has a section and a synopsis in
 *   docs/cli.md, and every synopsis (a plain block of `abhed-ext COMMAND …` lines, in any document) names each flag
 *   of that command's `--help`, and no other.
 *
 * Markers, HTML comments on the line right above a block (invisible when the markdown is rendered):
 * - `<!-- doc-test: skip WHY -->`: the block is not tested (say why);
 * - `<!-- doc-test: cwd=PATH -->`: the transcript runs in a fresh copy of PATH (relative to the repository root);
 *   by default it runs in the repository root. `setup=SCRIPT` (after `cwd=`) first sources SCRIPT (relative to the
 *   repository root) in the transcript's shell, for what the document tells the reader to do by hand;
 * - `<!-- doc-test: invalid-config -->`: the config must be rejected; if the next block is marked
 *   `<!-- doc-test: config-errors -->`, its lines are exactly the problems `parseConfig` lists (`LINE:COLUMN: …`);
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

const docFiles = [
  "README.md",
  ...readdirSync(join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`)
]

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
        const shown = parsed.failure.issues.map(
          (i) => `${i.line}:${i.column}: ${i.path === "" ? "" : `${i.path}: `}${i.message}`
        )
        expect(shown).toEqual(next.body.filter((l) => l.trim() !== ""))
      }
    }
  )
})

describe("docs: a file the documents show whole is shown as it is", () => {
  it("docs/extensions.md's first extension is docs/examples/block-secrets.sh", () => {
    const shown = blocksOf("docs/extensions.md").find((b) => b.info === "bash")
    expect(`${shown?.body.join("\n")}\n`).toBe(readFileSync(join(repoRoot, "docs/examples/block-secrets.sh"), "utf8"))
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Transcripts and commented outputs

/** A folder on PATH with `abhed-ext` running this repository's CLI with this Node (also for the processes it starts). */
const shimDir = (() => {
  const dir = mkdtempSync(join(tmpdir(), "abhed-docs-bin-"))
  const shim = join(dir, "abhed-ext")
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`)
  chmodSync(shim, 0o755)
  return dir
})()

/** Runs commands in order in one bash; returns each one's output (stdout and stderr joined). */
export const runCommands = (
  commands: ReadonlyArray<string>,
  cwd: string,
  setup?: string
): Promise<ReadonlyArray<string>> => {
  const script = [
    "exec 2>&1",
    ...(setup === undefined ? [] : [`. '${join(repoRoot, setup)}'`]),
    // `pnpm abhed-ext …` and `pnpm -s abhed-ext …` as the documents write them: the CLI of this repository.
    `pnpm() { if [ "$1" = "-s" ]; then shift; fi; if [ "$1" = "abhed-ext" ]; then shift; abhed-ext "$@"; else command pnpm "$@"; fi; }`,
    ...commands.flatMap((c, i) => [`__s=$?; printf '\\n@@doc-test ${i}@@\\n'; ( exit $__s )`, c]),
    `printf '\\n@@doc-test end@@\\n'`
  ].join("\n")
  // Asynchronous: a transcript that starts real extensions can take long on a busy machine, and the other test
  // files of this worker must not wait on it.
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], {
      cwd,
      env: {
        ...process.env,
        PATH: `${shimDir}:${dirname(process.execPath)}:${process.env["PATH"] ?? ""}`,
        NO_COLOR: "1"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d))
    child.on("error", reject)
    child.on("close", () => resolve(out.split(/\n@@doc-test (?:\d+|end)@@\n/).slice(1, commands.length + 1)))
  })
}

/** Timings vary from run to run: `12 ms`, `1.1 ms` → `N ms`, and the spaces before them (columns align on them). */
const mask = (line: string): string => line.replaceAll(/ +\d+(\.\d+)? ms\b/g, " N ms").trimEnd()

const escape = (s: string) => s.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Whether the actual lines are what the document shows: `…` alone on a line is any number of lines, `…` inside a
 * line is any text. Returns the document's lines with the gaps filled in from the actual ones, so that a failing
 * comparison shows a readable diff.
 */
export const matchLines = (expected: ReadonlyArray<string>, actual: ReadonlyArray<string>): ReadonlyArray<string> => {
  const patterns = expected.map((l) =>
    l.trim() === "…" ? undefined : new RegExp(`^${l.split("…").map(escape).join(".*")}$`)
  )
  // Smallest edit: greedy from the front, a gap takes lines until the next pattern matches the rest.
  const out: Array<string> = []
  const go = (p: number, a: number): boolean => {
    if (p === patterns.length) return a === actual.length
    const pattern = patterns[p]
    if (pattern === undefined) {
      for (let k = a; k <= actual.length; k++) {
        if (go(p + 1, k)) {
          out.unshift(...actual.slice(a, k))
          return true
        }
      }
      return false
    }
    const line = actual[a]
    if (line !== undefined && pattern.test(line) && go(p + 1, a + 1)) {
      out.unshift(line)
      return true
    }
    return false
  }
  return go(0, 0) ? out : expected
}

const outputLines = (text: string): ReadonlyArray<string> => {
  const lines = text.split("\n").map(mask)
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  return lines
}

interface Step {
  readonly command: string
  readonly expected: ReadonlyArray<string>
}

/** A transcript's commands (`$ ` lines, continued after a trailing `\`) and the output shown under each. */
export const transcriptSteps = (body: ReadonlyArray<string>): ReadonlyArray<Step> => {
  const steps: Array<{ command: string; expected: Array<string> }> = []
  for (let i = 0; i < body.length; i++) {
    const line = body[i] ?? ""
    if (line.startsWith("$ ")) {
      let command = line.slice(2)
      while (command.endsWith("\\") && i + 1 < body.length) command = `${command}\n${body[++i] ?? ""}`
      steps.push({ command, expected: [] })
    } else steps[steps.length - 1]?.expected.push(mask(line))
  }
  return steps.map((s) => ({ command: s.command, expected: outputLines(s.expected.join("\n")) }))
}

/** In a ```sh block: the commands followed by `# → OUTPUT` lines. */
export const commentedSteps = (body: ReadonlyArray<string>): ReadonlyArray<Step> => {
  const steps: Array<Step> = []
  for (let i = 0; i < body.length; i++) {
    const expected: Array<string> = []
    while (/^# → /.test(body[i + 1 + expected.length] ?? ""))
      expected.push(mask((body[i + 1 + expected.length] ?? "").slice(4)))
    if (expected.length > 0 && !(body[i] ?? "").startsWith("#")) steps.push({ command: body[i] ?? "", expected })
  }
  return steps
}

const cwdOf = (b: Block): string => {
  const folder = /cwd=(\S+)/.exec(b.marker ?? "")?.[1]
  if (folder === undefined) return repoRoot
  const copy = mkdtempSync(join(tmpdir(), "abhed-docs-cwd-"))
  cpSync(join(repoRoot, folder), copy, { recursive: true })
  return copy
}

const transcripts = allBlocks.filter((b) => !skipped(b) && (b.body[0] ?? "").startsWith("$ "))
const commented = allBlocks.filter((b) => !skipped(b) && b.info === "sh" && commentedSteps(b.body).length > 0)

describe("docs: every command whose output the documents show prints that output", () => {
  it("finds the transcripts", () => {
    expect(transcripts.length).toBeGreaterThanOrEqual(4)
    expect(commented.length).toBeGreaterThanOrEqual(1)
  })

  it.each([...transcripts, ...commented].map((b) => [where(b), b] as const))(
    "%s",
    async (_, b) => {
      const steps =
        b.info === "sh" && !(b.body[0] ?? "").startsWith("$ ") ? commentedSteps(b.body) : transcriptSteps(b.body)
      const outputs = await runCommands(
        steps.map((s) => s.command),
        cwdOf(b),
        /setup=(\S+)/.exec(b.marker ?? "")?.[1]
      )
      steps.forEach((step, i) => {
        const actual = outputLines(outputs[i] ?? "")
        // When the output matches, the document's lines with the gaps filled in are the output itself.
        expect(actual, `$ ${step.command}`).toEqual(matchLines(step.expected, actual))
      })
    },
    600_000
  )
})

// ---------------------------------------------------------------------------------------------------------------
// --help and the documents' flag tables

/**
 * The flags (`--long` and `-s`) in the first column of the flag tables between `start` and the next `## `, once per
 * row that names them: a flag in two rows (two descriptions that can drift apart) is listed twice.
 */
const documentedFlags = (file: string, start: RegExp): ReadonlyArray<string> => {
  const lines = readFileSync(join(repoRoot, file), "utf8").split("\n")
  const from = lines.findIndex((l) => start.test(l))
  const to = lines.findIndex((l, i) => i > from && /^## /.test(l))
  const flags: Array<string> = []
  for (const line of lines.slice(from + 1, to === -1 ? undefined : to)) {
    const cell = /^\| (`-[^|]*)\|/.exec(line)?.[1]
    flags.push(...new Set(cell?.match(/--?[a-z][a-z-]*/g) ?? []))
  }
  return flags
}

/** The flags `--help` lists in a section (`FLAGS`, `GLOBAL FLAGS`). */
const helpFlags = (help: string, section: string): ReadonlySet<string> => {
  const lines = help.split("\n")
  const from = lines.indexOf(section)
  const flags = new Set<string>()
  for (const line of lines.slice(from + 1)) {
    if (!line.startsWith("  -")) break
    const names = line.trim().split(/\s{2,}/)[0] ?? ""
    for (const flag of names.match(/(?<![\w-])--?[a-z][a-z-]*/g) ?? []) flags.add(flag)
  }
  return flags
}

/** The flags of `--help`'s `FLAGS`, each with its other names (`["--output", "-o"]`). */
const helpFlagNames = (help: string): ReadonlyArray<ReadonlyArray<string>> => {
  const lines = help.split("\n")
  const flags: Array<ReadonlyArray<string>> = []
  for (const line of lines.slice(lines.indexOf("FLAGS") + 1)) {
    if (!line.startsWith("  -")) break
    flags.push((line.trim().split(/\s{2,}/)[0] ?? "").match(/(?<![\w-])--?[a-z][a-z-]*/g) ?? [])
  }
  return flags
}

const helpOf = (args: ReadonlyArray<string>): string => {
  const r = spawnSync(process.execPath, [bin, ...args, "--help"], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" }
  })
  return `${r.stdout}${r.stderr}`
}

/** The commands `abhed-ext --help` lists. */
const subcommands = (() => {
  const lines = helpOf([]).split("\n")
  const names: Array<string> = []
  for (const line of lines.slice(lines.indexOf("SUBCOMMANDS") + 1)) {
    const name = /^ {2}([a-z][a-z-]*)\s/.exec(line)?.[1]
    if (name === undefined) break
    names.push(name)
  }
  return names
})()

/** Each plain block made of `abhed-ext COMMAND …` lines only: per command, the long flags its lines name. */
const synopses = allBlocks.flatMap((b) => {
  const lines = b.body.filter((l) => l.trim() !== "")
  if (b.info !== "" || lines.length === 0 || !lines.every((l) => /^abhed-ext( |$)/.test(l))) return []
  const byCommand = new Map<string, Set<string>>()
  for (const line of lines) {
    const command = /^abhed-ext ([a-z][a-z-]*)(?= |$)/.exec(line)?.[1]
    if (command === undefined || !subcommands.includes(command)) continue
    // The flags before `--` and a trailing comment: what follows `--` is the extension's or hook's own command line.
    const own = line.replace(/\s#\s.*$/, "").split(" -- ")[0] ?? ""
    const flags = byCommand.get(command) ?? new Set<string>()
    for (const flag of own.match(/(?<![\w-])--?[a-z][a-z-]*/g) ?? []) flags.add(flag)
    byCommand.set(command, flags)
  }
  return [...byCommand].map(([command, flags]) => ({ command, flags, where: where(b) }))
})

describe("docs: --help and the flag tables of the documents list the same flags, each once", () => {
  it.each([
    ["run", "docs/cli.md", /^## `abhed-ext run`/],
    ["check", "docs/cli.md", /^## `abhed-ext check`/],
    ["audit", "docs/cli.md", /^## `abhed-ext audit`/],
    ["replay", "docs/cli.md", /^## `abhed-ext replay`/],
    ["import-mcp", "docs/cli.md", /^## `abhed-ext import-mcp`/],
    ["mcp", "docs/cli.md", /^## `abhed-ext mcp`/],
    ["hook", "docs/hooks.md", /^## `abhed-ext hook`/]
  ] as const)("%s: %s", (command, file, section) => {
    const help = helpOf([command])
    expect([...documentedFlags(file, section)].sort()).toEqual([...helpFlags(help, "FLAGS")].sort())
  })

  it("every command --help lists has a section in docs/cli.md", () => {
    const headings = readFileSync(join(repoRoot, "docs/cli.md"), "utf8")
      .split("\n")
      .filter((l) => l.startsWith("## "))
      .join("\n")
    for (const command of subcommands) expect(headings, command).toContain(`\`abhed-ext ${command}\``)
    expect(subcommands.length).toBeGreaterThanOrEqual(13)
  })

  // A synopsis is a plain block of `abhed-ext COMMAND …` lines: it names every flag of its command's --help (by one
  // of its names: `-o` for `--output`), and no other.
  it.each(synopses.map((s) => [`${s.command}: ${s.where}`, s] as const))("synopsis %s", (_, s) => {
    const help = helpFlagNames(helpOf([s.command]))
    const shown = help.filter((names) => names.some((n) => s.flags.has(n))).map((names) => names[0])
    const unknown = [...s.flags].filter((f) => !help.some((names) => names.includes(f)))
    expect({ flags: shown, unknown }).toEqual({ flags: help.map((names) => names[0]), unknown: [] })
  })

  it("every command has a synopsis in docs/cli.md", () => {
    const shown = new Set(synopses.filter((s) => s.where.startsWith("docs/cli.md")).map((s) => s.command))
    expect(subcommands.filter((c) => !shown.has(c))).toEqual([])
  })

  it("the global flags: docs/cli.md's table", () => {
    const documented = [...documentedFlags("docs/cli.md", /^Global flags/)]
    expect(documented.sort()).toEqual([...helpFlags(helpOf([]), "GLOBAL FLAGS")].sort())
  })
})

// ---------------------------------------------------------------------------------------------------------------
// TypeScript examples

/**
 * docs/embedding.md's blocks are excerpts of docs/embedding/agent.ts, which `pnpm typecheck` checks and
 * test/host/embedding.test.ts runs: they are not compiled again here.
 */
const tsBlocks = allBlocks.filter((b) => b.info === "ts" && !skipped(b) && b.file !== "docs/embedding.md")

/** Each block as a module of its own in a folder under .tmp/ (ignored by git), with the workspace's settings. */
const tsFiles = (() => {
  mkdirSync(join(repoRoot, ".tmp"), { recursive: true })
  const dir = mkdtempSync(join(repoRoot, ".tmp", "docs-ts-"))
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: "../../tsconfig.base.json", include: ["*.ts"] }))
  return {
    dir,
    files: tsBlocks.map((b) => {
      const file = join(dir, `${b.file.replaceAll(/[/.]/g, "_")}_${b.line}.ts`)
      // `export {}`: a block without imports is a module too, so two blocks' names do not collide.
      writeFileSync(file, `${b.body.join("\n")}\nexport {}\n`)
      return { block: b, file }
    })
  }
})()

describe("docs: every TypeScript example type-checks and runs", () => {
  afterAll(() => rmSync(tsFiles.dir, { recursive: true, force: true }))

  it("finds the examples", () => {
    expect(tsBlocks.length).toBeGreaterThanOrEqual(4)
  })

  it("they type-check (strict, as the workspace)", () => {
    const r = spawnSync(
      process.execPath,
      [join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", tsFiles.dir],
      {
        cwd: repoRoot,
        encoding: "utf8"
      }
    )
    // Name the document's line, not the temporary file's.
    const report = `${r.stdout}${r.stderr}`.replaceAll(
      /\S*docs-ts-[^/]*\/(\S+?)_(\d+)\.ts\((\d+),(\d+)\)/g,
      "$1 block at line $2, +$3:$4"
    )
    expect(report.trim()).toBe("")
    expect(r.status).toBe(0)
  }, 120_000)

  it.each(tsFiles.files.map(({ block, file }) => [where(block), file, block] as const))(
    "%s runs",
    async (_, file, block) => {
      const extension = block.body.some((l) => l.includes("Extension.main("))
      // An extension answers a request on stdin; any other example is a module that loads without failing.
      const input = extension
        ? `{"event":"tool_call","session_id":"s","id":"1","call_id":"c","tool":"rm","args":{}}\n`
        : ""
      const r = await runProcess(process.execPath, [file], { input })
      expect(r.code, r.stderr).toBe(0)
      if (extension) expect(JSON.parse(r.stdout.trim())).toMatchObject({ id: "1", block: true, reason: "no" })
    },
    120_000
  )
})
