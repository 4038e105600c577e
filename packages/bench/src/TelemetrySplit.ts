import { Telemetry } from "@abhed/host"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { noop } from "./ExtensionFiles.ts"
import { time } from "./Harness.ts"
import { configOf, startHost } from "./HostSide.ts"
import { pinnedCommand, placements, withAgentOn } from "./Placement.ts"
import { hostToolCall, sessionId } from "./scenarios/ToolCall.ts"
import { summarize } from "./Stats.ts"

/**
 * Scenario 12's budget row taken apart: `node packages/bench/src/TelemetrySplit.ts [another|agent] [N]` runs the
 * row's loop (two hosts over one pinned no-op extension each, export on and off, alternating with the order rotated
 * every iteration, N iterations a side after 500 of warm-up) and prints each side's p50 by the side that ran just
 * before it. `off<-off` is the host with nothing of the export; `off<-on` adds what the exporting host left behind
 * (its work after the decision, and the caches it took); `on<-off` is the exporting host's own path from caches the
 * other host left; `on<-on` its own path after its own work. Not a budget row: for finding what the ratio is made of
 * (docs/benchmarks.md, scenario 12).
 */

const receiverScript = `
const http = require("node:http")
const server = http.createServer((req, res) => { req.resume(); req.on("end", () => { res.statusCode = 200; res.end("{}") }) })
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`
const placement = placements[process.argv[2] === "agent" ? 1 : 0]
const iterations = Number(process.argv[3] ?? 5000)
const Warmup = 500

if (placement === undefined) {
  process.stderr.write("TelemetrySplit: needs two CPUs and taskset, to pin the processes\n")
  process.exit(1)
}
const receiver = spawn(process.execPath, ["-e", receiverScript], { stdio: ["ignore", "pipe", "inherit"] })
const port = await new Promise<string>((resolve) => createInterface({ input: receiver.stdout }).once("line", resolve))
try {
  await withAgentOn(placement, async () => {
    const command = pinnedCommand(noop, placement)
    const off = await startHost(configOf(1, command), sessionId)
    const on = await startHost(
      configOf(1, command),
      sessionId,
      Telemetry.layer(Telemetry.forEndpoint(`http://127.0.0.1:${port}`))
    )
    try {
      const sides = { on: hostToolCall(on), off: hostToolCall(off) }
      const byPredecessor = new Map<string, Array<number>>()
      const bySide: Record<"on" | "off", Array<number>> = { on: [], off: [] }
      let previous: "on" | "off" | undefined
      for (let i = 0; i < Warmup + iterations; i++) {
        for (const side of i % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const)) {
          const us = (await time(sides[side])) * 1000
          if (i >= Warmup && previous !== undefined) {
            const key = `${side}<-${previous}`
            const samples = byPredecessor.get(key) ?? []
            samples.push(us)
            byPredecessor.set(key, samples)
            bySide[side].push(us)
          }
          previous = side
        }
      }
      process.stdout.write(`extension ${placement.label}, ${iterations} iterations a side\n`)
      for (const key of ["off<-off", "off<-on", "on<-off", "on<-on"]) {
        const samples = byPredecessor.get(key) ?? []
        process.stdout.write(`${key.padEnd(9)} p50 ${summarize(samples).p50.toFixed(1)} µs (${samples.length})\n`)
      }
      const p50 = { on: summarize(bySide.on).p50, off: summarize(bySide.off).p50 }
      process.stdout.write(
        `on ${p50.on.toFixed(1)} µs, off ${p50.off.toFixed(1)} µs: on/off ${(p50.on / p50.off).toFixed(3)}\n`
      )
    } finally {
      await on.dispose()
      await off.dispose()
    }
  })
} finally {
  receiver.kill()
}
