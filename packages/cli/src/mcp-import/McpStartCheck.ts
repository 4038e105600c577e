import { Effect } from "effect"
import type { AdapterLaunch } from "../hook/HookConfig.ts"
import { mcpArgsProblem } from "../mcp/McpFlags.ts"
import type { McpImport } from "./McpServers.ts"

/**
 * Why each adapter `import-mcp` would write could not start: its command line after `mcp` goes through the adapter's
 * own parser and checks (with every `${VAR}` set; nothing is run). An adapter that exits at startup is a server's
 * tools lost (or a session refused), so a config with one is not written. One line per server, naming it.
 */
export const adapterProblems = (imported: McpImport, launch: AdapterLaunch) =>
  Effect.gen(function* () {
    const problems: Array<string> = []
    for (const [i, extension] of imported.extensions.entries()) {
      if (extension["protocol"] === "mcp") continue // the host's own MCP extension: no adapter command line
      const args = Array.isArray(extension["args"]) ? extension["args"].map(String) : []
      const problem = yield* mcpArgsProblem(args.slice(launch.args.length + 1))
      if (problem !== undefined) {
        problems.push(`${imported.sources[i] ?? "mcpServers"}: the adapter would refuse its command line: ${problem}`)
      }
    }
    return problems
  })
