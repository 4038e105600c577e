import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { build } from "rolldown"

/*
 * The CLI the tests run, bundled once per run: the same source (packages/cli/src/bin.ts and everything it imports,
 * effect included), without the cost of loading it. From source, every CLI the tests start loads effect and the
 * packages from hundreds of modules: about 1.3 s of CPU per start with Node's compile cache, most of the suite's time
 * on a 2-core machine; bundled, about 0.3 s. The bundle is `bin.mjs` and, beside it in chunks/, what a command loads
 * when it runs (packages/cli/src/LazyHandler.ts): `hook` reads and compiles neither the host's session nor the MCP
 * client. Comments are dropped: half of effect's source is its documentation, which every start would read. It is
 * minified as well: every start decodes and compiles the entry whole, and a minified one costs less CPU to read.
 * `ABHED_TEST_CLI=source` runs the CLI from source instead (vitest.config.ts); the published package is covered by
 * `pnpm test:pack`.
 */

const repoRoot = NodePath.join(import.meta.dirname, "..", "..")
const cliSrc = NodePath.join(repoRoot, "packages", "cli", "src")

/**
 * Where a run's bundle goes: in the run's own temporary folder (vitest.config.ts), so that two runs at once (a stress
 * run beside a test run) never replace each other's.
 */
export const bundledBin = (runTmp: string): string => NodePath.join(runTmp, "abhed-cli", "bin.mjs")

/**
 * Each module keeps its own `import.meta.url` (its source file's), so what it finds beside itself it finds as from
 * source: the CLI's package.json (version, preflight). Two exceptions: the CLI's own path (`--this-cli`, found as
 * `../bin` beside `hook/ImportHooksCommand`) is the bundle's, so that a config written with it runs the bundle as
 * well; and the demo's examples (found from `demo/Examples`) are the bundle's own, as the published package's are.
 */
const sourceUrls = (bundleDir: string) => ({
  name: "abhed-source-urls",
  transform(code: string, id: string) {
    if (id.includes(`${NodePath.sep}node_modules${NodePath.sep}`) || !code.includes("import.meta.url")) return null
    const url =
      id === NodePath.join(cliSrc, "hook", "ImportHooksCommand.ts")
        ? pathToFileURL(NodePath.join(bundleDir, "hook", "ImportHooksCommand.mjs")).href
        : id === NodePath.join(cliSrc, "demo", "Examples.ts")
          ? pathToFileURL(NodePath.join(bundleDir, "dist", "demo", "Examples.js")).href
          : pathToFileURL(id).href
    return { code: code.replaceAll("import.meta.url", JSON.stringify(url)), map: null }
  }
})

/**
 * The demo's example extensions in examples/ beside the bundle, laid out as the published package ships them
 * (packages/cli/scripts/bundle-examples.ts): each TypeScript example as `X.js`, bundled here as the CLI is, the shell
 * and Python ones and the session copied, and an abhed.json whose `node X.ts` runs `node X.js`. From source each
 * TypeScript example loads @abhed/extension and effect from hundreds of modules, about 0.45 s of CPU, five per demo.
 * `run --config docs/examples/abhed.json` still runs the sources.
 */
const buildExamples = async (dir: string): Promise<void> => {
  const source = NodePath.join(repoRoot, "docs", "examples")
  const names = NodeFs.readdirSync(source)
  await build({
    input: names.filter((name) => name.endsWith(".ts")).map((name) => NodePath.join(source, name)),
    platform: "node",
    output: {
      dir,
      format: "esm",
      entryFileNames: "[name].js",
      chunkFileNames: "chunks/[name]-[hash].js",
      comments: false,
      minify: true
    },
    logLevel: "warn"
  })
  NodeFs.writeFileSync(NodePath.join(dir, "package.json"), `${JSON.stringify({ type: "module" })}\n`)
  for (const name of names.filter((name) => /\.(sh|py|jsonl)$/.test(name)))
    NodeFs.copyFileSync(NodePath.join(source, name), NodePath.join(dir, name))
  const config = JSON.parse(NodeFs.readFileSync(NodePath.join(source, "abhed.json"), "utf8")) as {
    $schema?: string
    extensions: Array<{ command: string; args?: Array<string> }>
  }
  delete config.$schema
  for (const extension of config.extensions)
    if (extension.command === "node" && extension.args !== undefined)
      extension.args = extension.args.map((arg) => arg.replace(/\.ts$/, ".js"))
  NodeFs.writeFileSync(NodePath.join(dir, "abhed.json"), `${JSON.stringify(config, null, 2)}\n`)
}

/**
 * effect's help formatter (effect/cli/CliOutput) builds an Intl.Segmenter as it is loaded, to measure help text. The
 * first use of Intl in a process loads ICU's data: about 75 M instructions, a fifth of `abhed-ext --version` (17-19 ms
 * of CPU), at every start, though only help and usage errors measure text. In the tests' bundle the segmenter is
 * built on its first use; the installed CLI still pays it at every start (effect's to change upstream).
 */
const EagerSegmenter = /new Intl\.Segmenter\(undefined, \{\s*granularity: "grapheme"\s*\}\)/
const lazySegmenter = {
  name: "abhed-lazy-segmenter",
  transform(code: string, id: string) {
    if (!id.endsWith(NodePath.join("effect", "dist", "cli", "CliOutput.js"))) return null
    if (!EagerSegmenter.test(code)) throw new Error(`${id}: no Intl.Segmenter where cli-bundle.ts expects one`)
    const lazy =
      "{ segment: (text) => (abhedSegmenter ??= " +
      'new Intl.Segmenter(undefined, { granularity: "grapheme" })).segment(text) }'
    return { code: `let abhedSegmenter;\n${code.replace(EagerSegmenter, lazy)}`, map: null }
  }
}

/** Builds the bundle as `bin` (a path from `bundledBin`). */
export const buildCliBundle = async (bin: string): Promise<void> => {
  const dir = NodePath.dirname(bin)
  await build({
    input: NodePath.join(cliSrc, "bin.ts"),
    platform: "node",
    // jsonc-parser's `main` is a UMD build that requires its own files at run time: take its ES module.
    resolve: { mainFields: ["module", "main"] },
    plugins: [sourceUrls(dir), lazySegmenter],
    output: {
      dir,
      format: "esm",
      entryFileNames: NodePath.basename(bin),
      chunkFileNames: "chunks/[name]-[hash].mjs",
      comments: false,
      minify: true
    },
    logLevel: "warn"
  })
  await buildExamples(NodePath.join(dir, "examples"))
}
