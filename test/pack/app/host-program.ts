// An Effect program against the installed @abhed/host: builds ExtensionHost.layer from a config and decides calls.
import { AuditLog, ExtensionHost } from "@abhed/host"
import { parseConfig } from "@abhed/protocol"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Layer, Result } from "effect"
import { readFileSync } from "node:fs"

const parsed = parseConfig(readFileSync("abhed.json", "utf8"))
if (Result.isFailure(parsed)) throw new Error(`abhed.json: ${parsed.failure.message}`)

const HostLive = ExtensionHost.layer(parsed.success, { sessionId: "pack-test", baseDir: process.cwd() }).pipe(
  Layer.provide(Layer.mergeAll(AuditLog.layerNone, NodeServices.layer))
)

const program = Effect.gen(function* () {
  const host = yield* ExtensionHost
  const rm = yield* host.toolCall({ tool: "bash", args: { command: "rm -rf build" } })
  const write = yield* host.toolCall({ tool: "write", args: { path: "a.txt" } })
  const ls = yield* host.toolCall({ tool: "bash", args: { command: "ls" } })
  const result = yield* host.toolResult({
    tool: "bash",
    args: { command: "cat" },
    content: "key=s3cr3t",
    is_error: false
  })
  return { rm: rm.decision, write: write.decision, ls: ls.decision, content: result.content }
})

Effect.runPromise(program.pipe(Effect.provide(HostLive))).then((decided) => console.log(JSON.stringify(decided)))
