import { Command } from "effect/cli"
import { lazyHandler } from "../LazyHandler.ts"
import { flags } from "./McpFlags.ts"

/**
 * `abhed-ext mcp [--name NAME] [--timeout-ms N] -- COMMAND [ARGS…]` and `abhed-ext mcp --name NAME --url URL
 * [--header K:V]…`: an extension that offers an MCP server's tools as `mcp__NAME__TOOL` and calls them
 * (docs/mcp.md). stdout carries replies and nothing else; everything else goes to stderr.
 */
export const mcp = Command.make(
  "mcp",
  flags,
  lazyHandler(() => import("./McpServe.ts").then((m) => m.serveMcp))
).pipe(
  Command.withShortDescription("Offer an MCP server's tools to the model as an extension, every call guarded"),
  Command.withDescription(
    "A long-lived extension that starts an MCP server (or connects to one over HTTP), declares its tools as " +
      "mcp__NAME__TOOL on list_tools and calls them on invoke_tool, so every call goes through tool_call and " +
      "tool_result like any other tool's. A call that fails, hangs past --timeout-ms or finds the server gone is a " +
      "failed tool result saying why. The server ends with the adapter. Put it in abhed.json as an extension's " +
      "command; see docs/mcp.md."
  ),
  Command.withExamples([
    {
      command: "abhed-ext mcp --name fs -- npx -y @modelcontextprotocol/server-filesystem /srv/project",
      description: "the filesystem server's tools, as mcp__fs__read_text_file, mcp__fs__write_file, …"
    },
    {
      command:
        "abhed-ext mcp --name github --url https://api.githubcopilot.com/mcp/ --header 'Authorization: Bearer ${GITHUB_TOKEN}'",
      description: 'an HTTP server, its token read from the environment (env_passthrough: ["GITHUB_TOKEN"])'
    }
  ])
)
