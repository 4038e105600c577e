import { callFault, MaxResultBytes, toolReply } from "@abhed/host/mcp/McpResult"
import { type McpArgs, parseTarget } from "@abhed/cli/mcp/McpTarget"
import { nameTools } from "@abhed/host/mcp/McpToolNames"
import { McpClientError, ProtocolError, TransportError } from "effect/ai/McpClientError"
import * as McpSchema from "effect/ai/McpSchema"
import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"

/** The adapter's pure parts (docs/cli.md#abhed-ext-mcp): names, the command line, results and faults. */

describe("mcp tool names", () => {
  it("prefixes, maps a character the rule refuses to _, skips a name too long or taken, with a warning each", () => {
    const naming = nameTools(
      "gh",
      ["create_issue", "files.read", "files_read", "x".repeat(60), "Files-Read", "FILES-READ"],
      (t) => t
    )
    expect(naming.tools.map((t) => [t.declared, t.tool])).toEqual([
      ["mcp__gh__create_issue", "create_issue"],
      ["mcp__gh__files_read", "files.read"],
      ["mcp__gh__Files-Read", "Files-Read"]
    ])
    expect(naming.warnings).toEqual([
      `tool "files.read" declared as "mcp__gh__files_read"`,
      `tool "files_read" skipped: another of the server's tools is already declared as "mcp__gh__files_read"`,
      `tool "${"x".repeat(60)}" skipped: "mcp__gh__${"x".repeat(60)}" does not fit the tool-name rule (letters, digits, _ and - only, 1 to 64 characters)`,
      `tool "FILES-READ" skipped: another of the server's tools is already declared as "mcp__gh__FILES-READ"`
    ])
  })

  it("shows a server's name escaped in its warning: no control, bidi override or invisible character reaches a terminal", () => {
    const naming = nameTools("h", ["read\u200b", "x\u009b2J\u202e", "a\u001b]0;T\u0007"], (t) => t)
    expect(naming.warnings).toEqual([
      `tool "read\\u200b" declared as "mcp__h__read_"`,
      `tool "x\\u009b2J\\u202e" declared as "mcp__h__x_2J_"`,
      `tool "a\\u001b]0;T\\u0007" declared as "mcp__h__a__0_T_"`
    ])
  })
})

describe("mcp command line", () => {
  const base: McpArgs = { name: undefined, url: undefined, headers: [], command: undefined, args: [] }
  it("a command: its file name is the default name", () => {
    expect(parseTarget({ ...base, command: "/usr/bin/mcp-server.git.mjs", args: ["a"] }, {})).toEqual(
      Result.succeed({
        name: "mcp-server_git",
        target: { _tag: "Stdio", command: "/usr/bin/mcp-server.git.mjs", args: ["a"] }
      })
    )
  })
  it("a URL: ${VAR} and ${VAR:-default} from the environment, in headers and the URL", () => {
    const parsed = parseTarget(
      { ...base, name: "gh", url: "https://${HOST:-api.example.com}/mcp", headers: ["Authorization: Bearer ${TOKEN}"] },
      { TOKEN: "t0k" }
    )
    expect(parsed).toEqual(
      Result.succeed({
        name: "gh",
        target: { _tag: "Http", url: "https://api.example.com/mcp", headers: { Authorization: "Bearer t0k" } }
      })
    )
  })
  it("refuses what it cannot use, saying what, never a header's value", () => {
    const problem = (args: Partial<McpArgs>, env = {}) => {
      const r = parseTarget({ ...base, ...args }, env)
      return Result.isFailure(r) ? r.failure : "accepted"
    }
    expect(problem({})).toContain("give the MCP server's command after --")
    expect(problem({ url: "https://x" })).toContain("--url needs --name")
    expect(problem({ name: "a", url: "https://x", command: "c" })).toContain("not both")
    expect(problem({ name: "a", url: "ftp://x" })).toContain("not an http:// or https:// URL")
    expect(problem({ name: "a", url: "https://x", headers: ["Bearer secret-value"] })).not.toContain("secret-value")
    expect(problem({ name: "a", url: "https://x", headers: ["Authorization: Bearer ${TOKEN}"] })).toBe(
      "--header Authorization: ${TOKEN} is not set (pass it to the extension with env_passthrough or env)"
    )
    expect(problem({ command: "c", headers: ["a:b"] })).toBe("--header goes with --url")
    expect(problem({ name: "a.b", command: "c" })).toContain("--name")
  })
})

describe("mcp results", () => {
  const result = (value: unknown) => Schema.decodeUnknownSync(McpSchema.CallToolResult)(value)
  it("text joined; structured content as JSON; binary described; isError a failed result", () => {
    expect(
      toolReply(
        result({
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" }
          ]
        })
      )
    ).toEqual({ result: "a\nb", is_error: false })
    expect(toolReply(result({ content: [{ type: "text", text: "{}" }], structuredContent: { n: 1 } }))).toEqual({
      result: { n: 1 },
      is_error: false
    })
    expect(toolReply(result({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }))).toEqual({
      result: "[image image/png, 3 bytes, not shown]",
      is_error: false
    })
    expect(toolReply(result({ content: [{ type: "text", text: "no" }], isError: true }))).toEqual({
      result: "no",
      is_error: true
    })
  })
  it("a result over the limit is a failed one giving its size", () => {
    const reply = toolReply(result({ content: [{ type: "text", text: "x".repeat(MaxResultBytes) }] }))
    expect(reply).toEqual({
      result: "the MCP server's result is 1.0 MiB, over the limit of 1.0 MiB; it was dropped",
      is_error: true
    })
  })
  it("a server's error message goes to the model, only its shape to the log", () => {
    const fault = callFault(
      new McpClientError({ reason: new ProtocolError({ code: -32000, description: "token abc rejected" }) }),
      100
    )
    expect(fault.forModel).toBe("the MCP server refused the call (JSON-RPC error -32000): token abc rejected")
    expect(fault.forLog).toBe("the MCP server refused the call (JSON-RPC error -32000, a message of 18 characters)")
    expect(
      callFault(new McpClientError({ reason: new TransportError({ description: "MCP process exited (1)" }) }), 100)
        .forModel
    ).toBe("the connection to the MCP server is lost (MCP process exited (1))")
  })
})
