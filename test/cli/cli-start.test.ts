import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { buildCliBundle } from "../support/cli-bundle.ts"
import { bin, repoRoot, runProcess } from "../support/cli-helpers.ts"

/**
 * What a start of `abhed-ext` loads: each command's definition (its flags and help, to parse the command line) and
 * only the implementation of the command that runs (packages/cli/src/LazyHandler.ts). `hook` is started once per
 * configured hook in every session: it must not pay for the host, the audit report, the MCP client or the OTLP
 * exporters; `run` (and every command that starts a host) loads the MCP client only for an MCP extension, the
 * exporters only for a collector. Run from source (the published package loads the same files, compiled), with a
 * module hook that records every file loaded.
 */

const modulesLoaded = async (
  entry: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = {}
): Promise<Array<string>> => {
  const out = join(mkdtempSync(join(tmpdir(), "abhed-modules-")), "modules.txt")
  const r = await runProcess(
    process.execPath,
    ["--import", `${repoRoot}test/fixtures/record-modules.mjs`, entry, ...args],
    { env: { ...env, ABHED_MODULES_OUT: out } }
  )
  expect(r.code, r.stderr).toBe(0)
  return readFileSync(out, "utf8").split("\n")
}

/** The run's bundle; with ABHED_TEST_CLI=source there is none, and one is built here. */
const testBundle = async (): Promise<string> => {
  if (bin.endsWith(".mjs")) return bin
  const bundle = join(mkdtempSync(join(tmpdir(), "abhed-bundle-")), "bin.mjs")
  await buildCliBundle(bundle)
  return bundle
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

/**
 * Node's builtins that only an ES module import of node:util evaluates (its lazy exports, TextDecoder's among them):
 * about 8 ms of CPU at every start for nothing the CLI uses (packages/cli/src/Style.ts).
 */
const unusedBuiltins = /^NativeModule (worker_threads|internal\/util\/trace_sigint)$/

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
    expect(loaded.filter((name) => unusedBuiltins.test(name))).toEqual([])
  })

  // The CLI the tests run (test/support/cli-bundle.ts) keeps this: its chunks are loaded as the command needs them.
  it("in the tests' bundle too: only the hook adapter's chunks", async () => {
    const loaded = await modulesLoaded(await testBundle(), ["hook", "--format", "claude", "--", "true"])
    expect(loaded.filter((name) => unusedBuiltins.test(name))).toEqual([])
    // Nor ICU's data: effect's help formatter builds its Intl.Segmenter on first use here (cli-bundle.ts).
    expect(loaded).not.toContain("Intl.Segmenter")
    const chunks = loaded.filter((url) => url.includes("/chunks/"))
    expect(chunks.filter((url) => /\/chunks\/(\w+Main|McpServe|McpProtocol|Telemetry|HostLayer)-/.test(url))).toEqual(
      []
    )
    expect(chunks.filter((url) => /\/chunks\/HookServe-/.test(url))).toHaveLength(1)
  })
})

/** No collector, whatever the environment running the tests says. */
const noCollector = { OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "", OTEL_SDK_DISABLED: "" }

/** `abhed-ext run` over one request with `extensions`, in a folder of its own; the modules it loaded. */
const runLoads = (
  entry: string,
  extensions: ReadonlyArray<object>,
  env: NodeJS.ProcessEnv = noCollector
): Promise<Array<string>> => {
  const dir = mkdtempSync(join(tmpdir(), "abhed-run-start-"))
  writeFileSync(join(dir, "abhed.json"), JSON.stringify({ extensions }))
  writeFileSync(
    join(dir, "events.jsonl"),
    `${JSON.stringify({ event: "tool_call", tool: "bash", call_id: "c1", args: { command: "ls" } })}\n`
  )
  return modulesLoaded(entry, ["run", "--config", join(dir, "abhed.json"), join(dir, "events.jsonl")], env)
}

const bashGuard = {
  name: "guard",
  command: "bash",
  args: [`${repoRoot}docs/examples/block-secrets.sh`],
  events: ["tool_call"]
}

/** The MCP client and the OTLP exporters (with the HTTP client they send through), by file from source. */
const mcpClientFiles = [/\/effect\/dist\/(ai|rpc)\//, /\/packages\/host\/src\/mcp\/McpExtension\.ts$/]
const exporterFiles = [
  /\/effect\/dist\/observability\//,
  /\/effect\/dist\/http\/(Fetch)?HttpClient\.js$/,
  /\/packages\/host\/src\/(Telemetry|TelemetryExport|TelemetryTracerExport)\.ts$/
]
const matching = (loaded: ReadonlyArray<string>, patterns: ReadonlyArray<RegExp>) =>
  loaded.filter((url) => patterns.some((re) => re.test(url)))

/**
 * The same in a bundle, whose chunks are not named for every module they hold: by what they hold, effect's keys of
 * the MCP client's, the exporters' and the HTTP client's services.
 */
const bundleHolds = (loaded: ReadonlyArray<string>, key: RegExp): boolean =>
  loaded
    .filter((url) => url.startsWith("file:") && url.endsWith(".mjs") && !url.includes("/test/fixtures/"))
    .some((url) => key.test(readFileSync(new URL(url), "utf8")))
// In whatever quotes the minifier wrote them.
const McpClientKey = /["'`]effect\/ai\/McpClient/
const ExporterKey = /["'`]effect\/observability\/Otlp/
const HttpClientKey = /["'`]effect\/http\/HttpClient/

describe("abhed-ext run's start", () => {
  it("without an MCP extension or a collector: neither the MCP client nor the OTLP exporters", async () => {
    const loaded = await runLoads(`${repoRoot}packages/cli/src/bin.ts`, [bashGuard])
    expect(matching(loaded, [...mcpClientFiles, ...exporterFiles])).toEqual([])
    // What it does is loaded: the host's session.
    expect(loaded.filter((url) => url.endsWith("/packages/host/src/ExtensionHost.ts"))).toHaveLength(1)
  })

  it("in the tests' bundle too; there, an MCP extension loads the client, a collector the exporters", async () => {
    const bundle = await testBundle()
    const plain = await runLoads(bundle, [bashGuard])
    expect([McpClientKey, ExporterKey, HttpClientKey].filter((key) => bundleHolds(plain, key))).toEqual([])
    expect(plain.filter((url) => /\/chunks\/HostLayer-/.test(url))).toHaveLength(1)

    // A server that cannot start: its extension is dead, the run goes on; the client was loaded to start it.
    const mcp = await runLoads(bundle, [
      bashGuard,
      { name: "nope", command: "/nonexistent/mcp-server", protocol: "mcp" }
    ])
    expect([McpClientKey, ExporterKey].filter((key) => bundleHolds(mcp, key))).toEqual([McpClientKey])

    // A collector nobody listens at: what cannot be sent is one warning, the run goes on.
    const exported = await runLoads(bundle, [bashGuard], {
      ...noCollector,
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
      OTEL_EXPORTER_OTLP_TIMEOUT: "500"
    })
    expect([McpClientKey, ExporterKey, HttpClientKey].filter((key) => bundleHolds(exported, key))).toEqual([
      ExporterKey,
      HttpClientKey
    ])
  })
})
