import * as Schema from "effect/Schema"

/** The config's MCP rules (ConfigSchema.ts): an extension may be an MCP server the host calls (`"protocol": "mcp"`). */

/** What an extension speaks on stdin/stdout: our line protocol, or MCP (the host is then the server's MCP client). */
export const ProtocolValues = ["abhed", "mcp"] as const
/** The events an MCP server answers: the tools it provides, and nothing else. */
export const McpProtocolEvents: ReadonlyArray<string> = ["list_tools", "invoke_tool"]

// An MCP server has no answer to a tool call, a result or a context: naming one of those would be a guard that never
// guards. Its name prefixes its tools' names (mcp__NAME__TOOL), which allow no '.' and at most 64 characters.
export const mcpExtension = Schema.makeFilter<{
  readonly name: string
  readonly protocol: string | undefined
  readonly events: ReadonlyArray<string>
}>(
  (x) => {
    if (x.protocol !== "mcp") return undefined
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(x.name)) {
      return {
        path: ["name"],
        issue: `an MCP server's name (protocol "mcp") is its tools' prefix, mcp__NAME__TOOL: letters, digits, _ and - only, 1 to 40 characters`
      }
    }
    const i = x.events.findIndex((e) => !McpProtocolEvents.includes(e))
    return i === -1
      ? undefined
      : {
          path: ["events", i],
          issue: `an MCP server (protocol "mcp") answers list_tools and invoke_tool only, so it cannot take part in ${x.events[i]}; leave events out, or run what should see ${x.events[i]} as an extension of its own`
        }
  },
  {
    // On the last check, where the JSON Schema and the messages look for them.
    identifier: "Extension",
    expected: `an extension object like {"name": "guard", "command": "bash"}`,
    toJsonSchema: () => ({
      if: { properties: { protocol: { const: "mcp", description: "An MCP server." } }, required: ["protocol"] },
      then: {
        properties: {
          name: {
            pattern: "^[A-Za-z0-9_-]{1,40}$",
            description:
              "An MCP server's name prefixes its tools' names (mcp__NAME__TOOL): letters, digits, _ and -, 1 to 40."
          },
          events: {
            items: { enum: [...McpProtocolEvents] },
            description: "An MCP server answers list_tools and invoke_tool only."
          }
        }
      }
    })
  }
)
