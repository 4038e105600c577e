import { EffectExtension } from "@abhed/extension/effect"
import { Effect, Option, Result } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { Version } from "../Version.ts"
import { positive } from "../DurationFlags.ts"
import { failUsage } from "../Usage.ts"
import { open } from "./McpConnection.ts"
import { handlers } from "./McpSession.ts"
import { parseTarget } from "./McpTarget.ts"

/**
 * Below the extension's own default `timeout_ms` (5000), so a hanging call is ours to cancel, not the host's to kill us
 * for.
 */
export const DefaultMcpTimeoutMs = 4000

/**
 * `abhed-ext mcp [--name NAME] [--timeout-ms N] -- COMMAND [ARGS…]` and `abhed-ext mcp --name NAME --url URL
 * [--header K:V]…`: an extension that offers an MCP server's tools as `mcp__NAME__TOOL` and calls them
 * (docs/mcp.md). stdout carries replies and nothing else; everything else goes to stderr.
 */
export const mcp = Command.make(
  "mcp",
  {
    name: Flag.String("name").pipe(
      Flag.withDescription("the server's name in its tools' names, mcp__NAME__TOOL (default: the command's file name)"),
      Flag.optional
    ),
    timeoutMs: Flag.Int("timeout-ms").pipe(
      Flag.withDescription(
        "how long a call (and the server's start) may take before it fails, in ms (keep it below the extension's timeout_ms)"
      ),
      Flag.withDefault(DefaultMcpTimeoutMs),
      positive
    ),
    startupTimeoutMs: Flag.Int("startup-timeout-ms").pipe(
      Flag.withDescription(
        "how long the server's start and the listing of its tools may take, in ms (default: --timeout-ms; keep it below the extension's timeout_ms)"
      ),
      positive,
      Flag.optional
    ),
    url: Flag.String("url").pipe(
      Flag.withDescription("a streamable HTTP MCP server's URL (instead of a command); ${VAR} is read from the environment"),
      Flag.optional
    ),
    header: Flag.String("header").pipe(
      Flag.withDescription("an HTTP header for --url, NAME:VALUE (repeatable); ${VAR} in VALUE is read from the environment"),
      Flag.atLeast(0)
    ),
    command: Argument.String("command").pipe(Argument.withDescription("the MCP server's command (after --)"), Argument.optional),
    args: Argument.String("args").pipe(Argument.withDescription("its arguments"), Argument.variadic())
  },
  Effect.fn("mcp")(function*({ args, command, header, name, startupTimeoutMs, timeoutMs, url }) {
    const parsed = parseTarget(
      {
        name: Option.getOrUndefined(name),
        url: Option.getOrUndefined(url),
        headers: header,
        command: Option.getOrUndefined(command),
        args
      },
      process.env
    )
    if (Result.isFailure(parsed)) return yield* failUsage(["abhed-ext", "mcp"], parsed.failure)
    const connection = yield* open(parsed.success.target, { name: "abhed-ext-mcp", version: Version })
    yield* EffectExtension.run(handlers({
      name: parsed.success.name,
      timeoutMs,
      startupTimeoutMs: Option.getOrElse(startupTimeoutMs, () => timeoutMs),
      connection
    }))
  }, Effect.scoped)
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
      command: "abhed-ext mcp --name github --url https://api.githubcopilot.com/mcp/ --header 'Authorization: Bearer ${GITHUB_TOKEN}'",
      description: "an HTTP server, its token read from the environment (env_passthrough: [\"GITHUB_TOKEN\"])"
    }
  ])
)
