import type { ExtensionHostShape } from "@abhed/host"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Deferred, Effect, Option } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { loadWatchable, watchRun } from "../../src/run/RunWatch.ts"

/**
 * `run --watch` watches its files again after each reload (a layer may have appeared, a script changed its path).
 * An edit made while the watches are replaced must still wake a reload: so at no moment may nothing watch.
 */

const watches = vi.hoisted(() => ({ open: 0, opened: 0, fewestOnceWatching: Number.POSITIVE_INFINITY }))

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>()
  const watch = ((...args: Parameters<typeof fs.watch>) => {
    const watcher = fs.watch(...args)
    watches.open++
    watches.opened++
    const close = watcher.close.bind(watcher)
    watcher.close = () => {
      watches.open--
      watches.fewestOnceWatching = Math.min(watches.fewestOnceWatching, watches.open)
      close()
    }
    return watcher
  }) as typeof fs.watch
  return { ...fs, default: { ...fs, watch }, watch }
})

describe("run --watch: watching again after a reload", () => {
  it("the new watches are made before the old ones are closed: an edit meanwhile is never missed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-rewatch-"))
    const config = join(dir, "abhed.json")
    writeFileSync(config, JSON.stringify({ extensions: [] }))
    const { fewest, made } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const first = yield* loadWatchable(Option.some(config))
          const host = yield* Deferred.make<ExtensionHostShape>()
          const reloaded = yield* Deferred.make<void>()
          yield* watchRun({
            config: Option.some(config),
            first,
            // Called once the reload has watched again: the session has not started, so it takes the new source.
            adopt: () => (Deferred.doneUnsafe(reloaded, Effect.void), true),
            host,
            ended: () => false,
            loaded: () => {}
          })
          const before = watches.opened
          writeFileSync(config, JSON.stringify({ extensions: [], policy: { default: "deny" } }))
          yield* Deferred.await(reloaded)
          // Read before the scope closes every watch.
          return { made: watches.opened - before, fewest: watches.fewestOnceWatching }
        })
      ).pipe(Effect.provide(NodeServices.layer))
    )
    // Watched again (new watches were made), and never with none open in between.
    expect(made, "watches made again").toBeGreaterThan(0)
    expect(fewest, "fewest watches open once watching").toBeGreaterThan(0)
  })
})
