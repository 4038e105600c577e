import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { AuditLog, ConfigInvalid, ConfigUnreadable, ExtensionHost, loadConfig } from "@abhed/host"
import { Effect, Layer, References } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

/**
 * `ExtensionHost.layerFromFile` (issue 12.5): the real host from one path. Relative paths in the config resolve
 * against the file's folder, not the current directory; an unreadable file and an invalid config are distinct,
 * typed failures, raised before any extension starts.
 */

const fixtures = NodePath.join(import.meta.dirname, "..", "fixtures")

const hostFrom = (file: string) =>
  ExtensionHost.layerFromFile(file, { sessionId: "s-file" }).pipe(
    Layer.provideMerge(AuditLog.layerMemory),
    Layer.provide(NodeServices.layer)
  )

const tempConfig = (text: string): string => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-config-"))
  const file = NodePath.join(dir, "abhed.json")
  NodeFs.writeFileSync(file, text)
  return file
}

describe("ExtensionHost.layerFromFile", () => {
  it.live(
    "starts the config's extensions, relative args resolved against the file's folder",
    () =>
      Effect.gen(function* () {
        // cli-guard.json runs `bash ../../docs/examples/block-secrets.sh`: only right from test/fixtures/.
        const outcome = yield* Effect.gen(function* () {
          const host = yield* ExtensionHost
          return yield* host.toolCall({ tool: "read", args: { path: "x/secrets" } })
        }).pipe(Effect.provide(hostFrom(NodePath.relative(process.cwd(), NodePath.join(fixtures, "cli-guard.json")))))
        assert.strictEqual(outcome.decision, "deny")
        assert.deepStrictEqual(
          outcome.reasons.map((r) => r.extension),
          ["guard"]
        )
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    30_000
  )

  it.live(
    "a config reached through a symbolic link resolves its relative paths against the real file (issue 22.4)",
    () =>
      Effect.gen(function* () {
        // The link lives in another folder: against the link's folder, block-secrets.sh is not found, the guard dies
        // at spawn and the read is allowed.
        const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-config-link-"))
        const link = NodePath.join(dir, "abhed.json")
        NodeFs.symlinkSync(NodePath.join(fixtures, "cli-guard.json"), link)
        const outcome = yield* Effect.gen(function* () {
          const host = yield* ExtensionHost
          return yield* host.toolCall({ tool: "read", args: { path: "x/secrets" } })
        }).pipe(Effect.provide(hostFrom(link)))
        assert.strictEqual(outcome.decision, "deny")
        assert.deepStrictEqual(
          outcome.reasons.map((r) => r.extension),
          ["guard"]
        )
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )

  it.live(
    "a command with a / resolves against the extension's cwd, not the config's folder (docs/extensions.md)",
    () =>
      Effect.gen(function* () {
        // The same guard.sh in the config's folder and in its cwd `sub`: the one in `sub` blocks, the other allows.
        const file = tempConfig(
          '{"extensions": [{"name": "g", "command": "./guard.sh", "cwd": "sub", "events": ["tool_call"]}]}'
        )
        const dir = NodePath.dirname(file)
        NodeFs.mkdirSync(NodePath.join(dir, "sub"))
        const guard = (reply: string) => `#!/bin/bash\nwhile IFS= read -r line; do echo '${reply}'; done\n`
        NodeFs.writeFileSync(NodePath.join(dir, "guard.sh"), guard("{}"), { mode: 0o755 })
        NodeFs.writeFileSync(NodePath.join(dir, "sub", "guard.sh"), guard('{"block":true,"reason":"sub"}'), {
          mode: 0o755
        })
        const outcome = yield* Effect.gen(function* () {
          const host = yield* ExtensionHost
          return yield* host.toolCall({ tool: "read", args: { path: "x" } })
        }).pipe(Effect.provide(hostFrom(file)))
        assert.strictEqual(outcome.decision, "deny")
        assert.deepStrictEqual(
          outcome.reasons.map((r) => r.reason),
          ["sub"]
        )
        NodeFs.rmSync(dir, { recursive: true, force: true })
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )

  it.effect("a FIFO is ConfigUnreadable at once, not a hang (issue 22.8)", () =>
    Effect.gen(function* () {
      const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-config-fifo-"))
      const fifo = NodePath.join(dir, "abhed.json")
      NodeChildProcess.execFileSync("mkfifo", [fifo])
      const error = yield* Effect.flip(Effect.provide(Effect.void, hostFrom(fifo)))
      assert.instanceOf(error, ConfigUnreadable)
      assert.strictEqual(
        error.message,
        `${fifo}: cannot read the config file: is a FIFO (named pipe), not a regular file`
      )
    })
  )

  it.effect("a missing file is ConfigUnreadable, naming the file", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Effect.provide(Effect.void, hostFrom("test/fixtures/no-such-config.json")))
      assert.instanceOf(error, ConfigUnreadable)
      assert.strictEqual(error.file, "test/fixtures/no-such-config.json")
      assert.include(error.message, "test/fixtures/no-such-config.json: cannot read the config file:")
    })
  )

  it.effect("an invalid config is ConfigInvalid with every problem and its path, and nothing is started", () =>
    Effect.gen(function* () {
      const file = tempConfig(
        `{"extensions":[{"name":"a","command":"/no/such/program"}],"max_rewrite_rounds":0,"policy":{"defualt":"deny"}}`
      )
      const error = yield* Effect.flip(Effect.provide(Effect.void, hostFrom(file)))
      assert.instanceOf(error, ConfigInvalid)
      if (!(error instanceof ConfigInvalid)) return
      assert.deepStrictEqual(
        error.issues.map((i) => i.path),
        ["max_rewrite_rounds", "policy.defualt"]
      )
      for (const line of error.message.split("\n")) assert.isTrue(line.startsWith(`${file}:`), line)
    })
  )

  it.effect("loadConfig gives the decoded config, the absolute file and its folder", () =>
    Effect.gen(function* () {
      const loaded = yield* loadConfig("test/fixtures/cli-guard.json")
      assert.strictEqual(loaded.file, NodePath.join(fixtures, "cli-guard.json"))
      assert.strictEqual(loaded.baseDir, fixtures)
      assert.deepStrictEqual(
        loaded.config.extensions.map((x) => x.name),
        ["guard"]
      )
    }).pipe(Effect.provide(NodeServices.layer))
  )
})
