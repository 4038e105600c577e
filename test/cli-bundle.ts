import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { build } from "rolldown"

/*
 * The CLI the tests run, bundled once per run into one file: the same source (packages/cli/src/bin.ts and everything
 * it imports, effect included), without the cost of loading it. From source, every CLI the tests start loads effect
 * and the packages from hundreds of modules: about 1.3 s of CPU per start with Node's compile cache, most of the
 * suite's time on a 2-core machine; bundled, about 0.4 s. `ABHED_TEST_CLI=source` runs the CLI from source instead
 * (vitest.config.ts); the published package is covered by `pnpm test:pack`.
 */

const repoRoot = NodePath.join(import.meta.dirname, "..")
const cliSrc = NodePath.join(repoRoot, "packages", "cli", "src")

/** Where the bundle goes: beside Node's compile cache, so that the cache (keyed by path and content) is reused. */
export const bundleDir = NodePath.join(repoRoot, "node_modules", ".cache", "abhed-test-cli")
export const bundledBin = NodePath.join(bundleDir, "bin.mjs")

/**
 * Each module keeps its own `import.meta.url` (its source file's), so what it finds beside itself it finds as from
 * source: the CLI's package.json (version, preflight), docs/examples (`demo`). One exception: the CLI's own path
 * (`--this-cli`, found as `../bin` beside `hook/ImportHooksCommand`) is the bundle's, so that a config written with
 * it runs the bundle as well.
 */
const sourceUrls = {
  name: "abhed-source-urls",
  transform(code: string, id: string) {
    if (id.includes(`${NodePath.sep}node_modules${NodePath.sep}`) || !code.includes("import.meta.url")) return null
    const url =
      id === NodePath.join(cliSrc, "hook", "ImportHooksCommand.ts")
        ? pathToFileURL(NodePath.join(bundleDir, "hook", "ImportHooksCommand.mjs")).href
        : pathToFileURL(id).href
    return { code: code.replaceAll("import.meta.url", JSON.stringify(url)), map: null }
  }
}

/** Builds the bundle into a fresh folder, then renames it into place (two runs at once each see a whole bundle). */
export const buildCliBundle = async (): Promise<string> => {
  const staging = `${bundleDir}.${process.pid}`
  NodeFs.rmSync(staging, { recursive: true, force: true })
  await build({
    input: NodePath.join(cliSrc, "bin.ts"),
    platform: "node",
    // jsonc-parser's `main` is a UMD build that requires its own files at run time: take its ES module.
    resolve: { mainFields: ["module", "main"] },
    plugins: [sourceUrls],
    output: { dir: staging, format: "esm", codeSplitting: false, entryFileNames: "bin.mjs" },
    logLevel: "warn"
  })
  NodeFs.rmSync(bundleDir, { recursive: true, force: true })
  NodeFs.renameSync(staging, bundleDir)
  return bundledBin
}
