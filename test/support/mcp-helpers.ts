import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { bin, repoRoot } from "./cli-helpers.ts"
import { Patient } from "./extension-helpers.ts"

/**
 * Configs that run `abhed-ext mcp` as an extension over real MCP servers (devDependencies) and the fixtures of
 * test/fixtures/mcp, all started with this Node (24, the workspace's). The servers start slowly on a busy machine:
 * every bound a test is not about is patient, and the adapter's own bounds sit below the host's.
 */

export const filesystemServer = join(repoRoot, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
export const everythingServer = join(repoRoot, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
export const faultyServer = join(repoRoot, "test/fixtures/mcp/faulty-server.mjs")
export const floodServer = join(repoRoot, "test/fixtures/mcp/flood-server.mjs")
export const denyGuard = join(repoRoot, "test/fixtures/mcp/deny-guard.mjs")

/**
 * The adapter's bounds when a test is not about them, and the host's above them (`PatientHost`), so that the
 * adapter answers before the host gives up: a server's start took over 30 s with the suite running on 2 cores.
 */
export const PatientAdapter = { timeoutMs: 12_000, startupTimeoutMs: 50_000 } as const
export const PatientHost = { timeout_ms: 60_000, startup_timeout_ms: 60_000 } as const

/** The adapter as an extension: `abhed-ext mcp --name NAME … -- node SERVER ARGS…`. */
export const adapterExtension = (
  name: string,
  server: ReadonlyArray<string>,
  options: { readonly timeoutMs?: number; readonly extra?: Record<string, unknown> } = {}
) => ({
  name: `mcp-${name}`,
  command: process.execPath,
  args: [
    bin,
    "mcp",
    "--name",
    name,
    "--timeout-ms",
    String(options.timeoutMs ?? PatientAdapter.timeoutMs),
    "--startup-timeout-ms",
    String(PatientAdapter.startupTimeoutMs),
    "--",
    process.execPath,
    ...server
  ],
  ...PatientHost,
  grace_ms: 3000,
  ...options.extra
})

/**
 * An MCP server the host speaks to itself (`"protocol": "mcp"`): `node SERVER ARGS…`, patient unless a test is about
 * the timeout (a call is then bounded at four fifths of `timeout_ms`).
 */
export const inHostExtension = (name: string, server: ReadonlyArray<string>, extra: Record<string, unknown> = {}) => ({
  name,
  command: process.execPath,
  args: [...server],
  protocol: "mcp",
  ...PatientHost,
  grace_ms: 3000,
  ...extra
})

/** A guard that blocks the tool calls whose name matches `pattern` (a regular expression). */
export const guardExtension = (pattern: string) => ({
  name: "guard",
  command: process.execPath,
  args: [denyGuard, pattern],
  events: ["tool_call"],
  ...Patient
})

export const writeConfig = (config: unknown): string => {
  const file = join(mkdtempSync(join(tmpdir(), "abhed-mcp-")), "abhed.json")
  writeFileSync(file, JSON.stringify(config))
  return file
}

/** Input lines for `abhed-ext run`. */
export const lines = (...requests: ReadonlyArray<object>): string =>
  `${requests.map((r) => JSON.stringify(r)).join("\n")}\n`

export const invoke = (tool: string, args: object = {}) => ({ event: "invoke_tool", tool, args })
