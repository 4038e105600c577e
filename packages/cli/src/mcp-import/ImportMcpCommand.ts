import { Argument, Command, Flag } from "effect/cli"
import { HookFormats } from "../hook/HookFormat.ts"
import { ImportFlags } from "../ImportFlags.ts"
import { lazyHandler } from "../LazyHandler.ts"

/**
 * `abhed-ext import-mcp`'s flags and arguments, read at start to parse the command line; what it does is
 * ImportMcpMain.ts, loaded when it runs.
 */
export const flags = {
  format: Flag.Literals("format", HookFormats).pipe(
    Flag.withDescription("whose file this is (default: told by where it is and the keys in it)"),
    Flag.optional
  ),
  ...ImportFlags,
  inHost: Flag.Boolean("in-host").pipe(
    Flag.withDescription(
      'write each stdio server as one the host speaks MCP to itself ("protocol": "mcp"): no adapter, no abhed-ext on PATH'
    ),
    Flag.withDefault(false)
  ),
  file: Argument.String("file").pipe(
    Argument.withDescription("a Claude Code .mcp.json or settings.json, or a Gemini CLI settings.json (- for stdin)")
  )
}

/**
 * `abhed-ext import-mcp FILE`: prints an abhed.json with one `abhed-ext mcp` extension per MCP server of a Claude
 * Code `.mcp.json` or settings, or a Gemini CLI settings.json; on stderr, each server it could not carry over, what
 * it changed, and why.
 */
export const importMcp = Command.make(
  "import-mcp",
  flags,
  lazyHandler(() => import("./ImportMcpMain.ts").then((m) => m.importMcpMain))
).pipe(
  Command.withShortDescription("Turn a Claude Code or Gemini CLI file's MCP servers into an abhed.json"),
  Command.withDescription(
    "Prints an abhed.json with one `abhed-ext mcp` extension per MCP server of a Claude Code .mcp.json or " +
      "settings.json, or a Gemini CLI settings.json. Variables the servers read are passed by name " +
      "(env_passthrough), never copied; literal credentials are not copied either. Names on stderr every server " +
      "it could not carry over (SSE, disabled), and why. See docs/mcp.md."
  ),
  Command.withExamples([
    {
      command: "abhed-ext import-mcp .mcp.json > abhed.json",
      description: "bring a project's Claude Code MCP servers"
    },
    { command: "abhed-ext import-mcp -o abhed.json .gemini/settings.json", description: "bring Gemini CLI's" }
  ])
)
