import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { buildCliBundle } from "../support/cli-bundle.ts"
import { bin, repoRoot, runProcess } from "../support/cli-helpers.ts"

/**
 * What a start of `abhed-ext` loads: each command's definition (its flags and help, to parse the command line) and
 * only the implementation of the command that runs (packages/cli/src/LazyHandler.ts). `hook` is started once per
 * configured hook in every session: it must not pay for the host, the audit report, the MCP client or the OTLP
 * exporters. Run from source (the published package loads the same files, compiled), with a module hook that
 * records every file loaded.
 */

const modulesLoaded = async (entry: string, args: ReadonlyArray<string>): Promise<Array<string>> => {
  const out = join(mkdtempSync(join(tmpdir(), "abhed-modules-")), "modules.txt")
  const r = await runProcess(
    process.execPath,
    ["--import", `${repoRoot}test/fixtures/record-modules.mjs`, entry, ...args],
    { env: { ABHED_MODULES_OUT: out } }
  )
  expect(r.code, r.stderr).toBe(0)
  return readFileSync(out, "utf8").split("\n")
}

/**
 * Files only other commands need: their implementations, the host's session, a config file's reader (the adapter
 * reads none), the MCP client, the exporters.
 */
const otherCommands = [
  /\/packages\/cli\/src\/.*(Main|McpServe)\.ts$/,
  /\/packages\/host\/src\/(ExtensionHost|Telemetry)\.ts$/,
  /\/packages\/protocol\/src\/(index|ConfigSchema|ConfigDecoder)\.ts$/,
  /\/jsonc-parser\//,
  /\/effect\/dist\/ai\//,
  /\/effect\/dist\/observability\/Otlp/
]

describe("abhed-ext hook's start", () => {
  it("loads the hook adapter and no other command's implementation, host session, config reader, MCP client or exporter", async () => {
    const loaded = await modulesLoaded(`${repoRoot}packages/cli/src/bin.ts`, [
      "hook",
      "--format",
      "claude",
      "--",
      "true"
    ])
    expect(loaded.filter((url) => otherCommands.some((re) => re.test(url)))).toEqual([])
    // What it does is loaded: the adapter.
    expect(loaded.filter((url) => url.endsWith("/packages/cli/src/hook/HookServe.ts"))).toHaveLength(1)
  })

  // The CLI the tests run (test/support/cli-bundle.ts) keeps this: its chunks are loaded as the command needs them.
  it("in the tests' bundle too: only the hook adapter's chunks", async () => {
    // The run's bundle; with ABHED_TEST_CLI=source there is none, and one is built here.
    const bundle = bin.endsWith(".mjs") ? bin : join(mkdtempSync(join(tmpdir(), "abhed-bundle-")), "bin.mjs")
    if (bundle !== bin) await buildCliBundle(bundle)
    const chunks = (await modulesLoaded(bundle, ["hook", "--format", "claude", "--", "true"])).filter((url) =>
      url.includes("/chunks/")
    )
    expect(chunks.filter((url) => /\/chunks\/(\w+Main|McpServe|McpProtocol|Telemetry|HostLayer)-/.test(url))).toEqual(
      []
    )
    expect(chunks.filter((url) => /\/chunks\/HookServe-/.test(url))).toHaveLength(1)
  })
})
