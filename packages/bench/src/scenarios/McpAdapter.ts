import { Defaults, extensionConfig } from "@abhed/protocol"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as McpClient from "effect/ai/McpClient"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as ChildProcess from "effect/process/ChildProcess"
import { fileURLToPath } from "node:url"
import { interleave, timed } from "../Harness.ts"
import { startHost } from "../HostSide.ts"
import type { Loop } from "../Plan.ts"
import { latencyRows } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { summarize } from "../Stats.ts"
import { sessionId } from "./ToolCall.ts"

/**
 * 11. An MCP tool call (server-everything's `echo`) through the host, against the same call straight through effect's
 * McpClient in this process (raw column), three sides interleaved in one run, each with its own server, all started
 * by this Node: the host speaking MCP itself (`"protocol": "mcp"`, its row carries the budget, 1.2 at p50: the host's
 * dispatch adds at most 20% to the call), and the host through the `abhed-ext mcp` adapter (two process hops more:
 * the adapter for other hosts, no budget).
 */

const everything = fileURLToPath(
  new URL("../../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url)
)
const cli = fileURLToPath(new URL("../../../cli/src/bin.ts", import.meta.url))

/** Counts of its own (a spawn-free call is quick; the servers' start is paid once per side). */
const loops: Record<"quick" | "full", Loop> = {
  quick: { warmup: 20, iterations: 200 },
  full: { warmup: 100, iterations: 2000 }
}

const args = { message: "hello" }

export const mcpAdapter: Scenario = {
  title: "11. MCP tool through the host (in-host and abhed-ext mcp) vs McpClient",
  run: async (plan, progress) => {
    const loop = loops[plan.mode]
    progress(`server-everything's echo, ${loop.iterations} calls per side`)
    // Patient bounds: server-everything takes seconds to start on a busy machine.
    const adapter = extensionConfig({
      name: "mcp-ad",
      command: process.execPath,
      args: [
        cli,
        "mcp",
        "--name",
        "ad",
        "--timeout-ms",
        "20000",
        "--startup-timeout-ms",
        "50000",
        "--",
        process.execPath,
        everything,
        "stdio"
      ],
      events: ["session_start", "list_tools", "invoke_tool"],
      startup_timeout_ms: 60_000,
      timeout_ms: 30_000
    })
    // The same server, spoken to by the host itself.
    const inHost = extensionConfig({
      name: "ev",
      command: process.execPath,
      args: [everything, "stdio"],
      protocol: "mcp",
      startup_timeout_ms: 60_000,
      timeout_ms: 30_000
    })
    const host = await startHost(
      {
        extensions: [adapter, inHost],
        policy: Defaults.policy,
        max_rewrite_rounds: Defaults.max_rewrite_rounds,
        builtin_tools: Defaults.builtin_tools
      },
      sessionId
    )
    const direct = ManagedRuntime.make(
      McpClient.layerStdio({
        name: "bench",
        version: "1",
        protocol: McpProtocol.v2025_11_25,
        command: ChildProcess.make(process.execPath, [everything, "stdio"], { stderr: "ignore" })
      }).pipe(Layer.provide(NodeServices.layer))
    )
    try {
      const echo = await direct.runPromise(
        Effect.gen(function* () {
          const client = yield* McpClient.McpClient
          const tools = yield* client.listTools()
          const tool = tools.find((t) => t.name === "echo")
          if (tool === undefined) return yield* Effect.die(new Error("server-everything declares no echo tool"))
          return { client, tool }
        })
      )
      const samples = await interleave(
        {
          adapter: timed(async () => {
            const outcome = await host.run(Effect.orDie(host.host.invokeTool({ tool: "mcp__ad__echo", args })))
            if (outcome.is_error) throw new Error(`the adapter's echo failed: ${JSON.stringify(outcome.result)}`)
          }),
          inHost: timed(async () => {
            const outcome = await host.run(Effect.orDie(host.host.invokeTool({ tool: "mcp__ev__echo", args })))
            if (outcome.is_error) throw new Error(`the in-host echo failed: ${JSON.stringify(outcome.result)}`)
          }),
          raw: timed(() => direct.runPromise(echo.client.callTool({ tool: echo.tool, arguments: args })))
        },
        loop
      )
      const raw = summarize(samples.raw)
      return [
        ...latencyRows(
          "11. invoke_tool: MCP echo, the host speaking MCP vs McpClient",
          summarize(samples.inHost),
          raw,
          1.2
        ),
        ...latencyRows(
          "11. invoke_tool: MCP echo via abhed-ext mcp vs McpClient",
          summarize(samples.adapter),
          raw,
          null
        )
      ]
    } finally {
      await Promise.all([host.dispose(), direct.dispose()])
    }
  }
}
