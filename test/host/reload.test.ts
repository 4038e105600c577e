import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { AuditLog, ExtensionHost, reloadFromFile } from "@abhed/host"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { exists, Patient } from "../support/extension-helpers.ts"

/**
 * `ExtensionHost.reload` with real processes: an unchanged extension keeps its process (same pid), one whose
 * script changed by a byte is started again, a removed one ends, an added one starts; a config that does not load
 * changes nothing; when the host closes nothing is left running.
 */

/** An extension that denies every tool call naming itself; `version` is a comment (a byte to change). */
const script = (name: string, version: number) =>
  `#!/usr/bin/env bash
# version ${version}
while IFS= read -r line; do
  if [[ $line == *'"event":"tool_call"'* ]]; then echo '{"block":true,"reason":"${name} says no"}'; else echo '{}'; fi
done
`

const world = () => {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-reload-")))
  const file = NodePath.join(dir, "abhed.json")
  const write = (names: ReadonlyArray<string>) =>
    NodeFs.writeFileSync(
      file,
      JSON.stringify({
        extensions: names.map((name) => ({ name, command: "bash", args: [`${name}.sh`], ...Patient, grace_ms: 300 }))
      })
    )
  return {
    dir,
    file,
    write,
    script: (name: string, version: number) =>
      NodeFs.writeFileSync(NodePath.join(dir, `${name}.sh`), script(name, version))
  }
}

const pids = (host: ExtensionHost["Service"]) =>
  Effect.map(host.status, (all) => Object.fromEntries(all.map((x) => [x.name, x.pid ?? -1])))

describe("ExtensionHost.reload with real processes", () => {
  it.live(
    "keeps the unchanged process, restarts a changed script, ends the removed, a bad config keeps the old set",
    () =>
      Effect.gen(function* () {
        const w = world()
        for (const name of ["same", "edited", "gone", "new"]) w.script(name, 1)
        w.write(["same", "edited", "gone"])
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          ExtensionHost.layerFromFile(w.file, { sessionId: "s-reload" }).pipe(
            Layer.provideMerge(AuditLog.layerMemory),
            Layer.provide(NodeServices.layer)
          ),
          scope
        )
        const host = Context.get(context, ExtensionHost)
        const before = yield* pids(host)
        assert.deepStrictEqual(Object.keys(before), ["edited", "gone", "same"])

        w.script("edited", 2)
        w.write(["same", "edited", "new"])
        const report = yield* reloadFromFile(host, w.file).pipe(Effect.provide(NodeServices.layer))
        assert.deepStrictEqual(
          [report.kept, report.restarted, report.removed, report.added],
          [["same"], ["edited"], ["gone"], ["new"]]
        )
        const after = yield* pids(host)
        assert.deepStrictEqual(Object.keys(after), ["edited", "new", "same"])
        assert.strictEqual(after["same"], before["same"])
        assert.notStrictEqual(after["edited"], before["edited"])
        // The reload returns once what left the set has ended.
        assert.isFalse(exists(before["edited"] ?? -1))
        assert.isFalse(exists(before["gone"] ?? -1))
        const outcome = yield* host.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.deepStrictEqual(
          outcome.reasons.map((r) => r.reason),
          ["edited says no", "new says no", "same says no"]
        )

        NodeFs.writeFileSync(w.file, '{ "extensions": [ { "name": 3 } ')
        const error = yield* Effect.flip(reloadFromFile(host, w.file).pipe(Effect.provide(NodeServices.layer)))
        assert.strictEqual(error._tag, "ConfigInvalid")
        assert.deepStrictEqual(yield* pids(host), after)
        const still = yield* host.toolCall({ tool: "bash", args: { command: "ls" } })
        assert.deepStrictEqual(
          still.reasons.map((r) => r.reason),
          ["edited says no", "new says no", "same says no"]
        )

        yield* Scope.close(scope, Exit.void)
        for (const pid of [...Object.values(before), ...Object.values(after)])
          assert.isFalse(exists(pid), `pid ${pid} still running`)
      }),
    120_000
  )
})
