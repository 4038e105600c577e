import { AuditLog, ExtensionHost } from "@abhed/host"
import { printOf } from "@abhed/host/ReloadPlan"
import { extensionConfig } from "@abhed/protocol"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, References } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Patient } from "../support/extension-helpers.ts"
import { filesystemServer, guardExtension, inHostExtension, writeConfig } from "../support/mcp-helpers.ts"

/**
 * An MCP server the host speaks to itself (`"protocol": "mcp"`), through the host's API (`ExtensionHost.layerFromFile`):
 * its tools accepted as mcp__fs__*, a call made, a guard denying mcp__fs__write_file before the server sees it, the
 * extension live in status with the server's pid, and the server gone once the host's scope closes; `protocol` is part of
 * the definition that reload and trust compare.
 */

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-mcp-api-")))
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "the notes\n")
const fs = inHostExtension("fs", [filesystemServer, root])
const config = writeConfig({ extensions: [fs, guardExtension("^mcp__fs__write_file$")] })

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("protocol mcp through the host API", () => {
  it.live(
    "tools, a call, a guarded write, status, and no server left after close",
    () =>
      Effect.gen(function* () {
        const pid = yield* Effect.scoped(
          Effect.gen(function* () {
            const host = yield* ExtensionHost
            const tools = (yield* host.tools).map((t) => t.tool.name)
            assert.include(tools, "mcp__fs__read_text_file")
            assert.include(tools, "mcp__fs__write_file")
            const read = yield* host.invokeTool({
              tool: "mcp__fs__read_text_file",
              args: { path: NodePath.join(root, "notes.txt") }
            })
            assert.isFalse(read.is_error)
            assert.include(JSON.stringify(read.result), "the notes")
            const write = yield* host.toolCall({
              tool: "mcp__fs__write_file",
              args: { path: NodePath.join(root, "new.txt"), content: "hi" }
            })
            assert.strictEqual(write.decision, "deny")
            assert.isFalse(NodeFs.existsSync(NodePath.join(root, "new.txt")))
            const status = (yield* host.status).find((s) => s.name === "fs")
            assert.strictEqual(status?.state._tag, "live")
            const pid = status?.pid ?? 0
            assert.isTrue(pid > 0 && alive(pid))
            return pid
          }).pipe(
            Effect.provide(
              ExtensionHost.layerFromFile(config, { sessionId: "s-mcp-api" }).pipe(
                Layer.provideMerge(AuditLog.layerNone),
                Layer.provide(NodeServices.layer)
              )
            )
          )
        )
        // The host's scope is closed: the server it started is gone (reaped a moment after its group is ended).
        const deadline = Date.now() + Patient.timeout_ms
        while (alive(pid) && Date.now() < deadline) yield* Effect.sleep("50 millis")
        assert.isFalse(alive(pid))
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    180_000
  )
})

describe("protocol mcp in an extension's definition", () => {
  it.effect(
    "a changed protocol is a changed definition (reload restarts it), an absent one is the old definition",
    () =>
      Effect.gen(function* () {
        const base = extensionConfig({ name: "fs", command: "node", args: ["server.js"] })
        const before = yield* printOf([], base)
        assert.strictEqual(yield* printOf([], { ...base, protocol: undefined }), before)
        assert.notStrictEqual(yield* printOf([], { ...base, protocol: "mcp" }), before)
        assert.notStrictEqual(
          yield* printOf([], { ...base, protocol: "mcp" }),
          yield* printOf([], { ...base, protocol: "abhed" })
        )
      })
  )
})
