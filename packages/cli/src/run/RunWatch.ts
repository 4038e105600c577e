import type { ExtensionHostShape, ReloadReport } from "@abhed/host"
import { findProjectLayer, layerPlaces, layerRoots } from "@abhed/host/ConfigLayers"
import { scriptsOf } from "@abhed/host/Fingerprint"
import { printable } from "@abhed/host/Printable"
import type { Config } from "@abhed/protocol"
import {
  Console,
  Deferred,
  Duration,
  Effect,
  Exit,
  type FileSystem,
  Option,
  type Path,
  Queue,
  Scope,
  type Stdio
} from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type { ConfigRejected } from "../CliError.ts"
import { loadConfig } from "../ConfigFile.ts"
import { layersHost, layersLabel, loadCliLayers, type RunSource, trustStoreFile } from "../Layers.ts"
import { processHost } from "../HostLayer.ts"
import { changes, projectPlaces, withTarget } from "./WatchedFiles.ts"

/**
 * `abhed-ext run --watch`: the config read again whenever one of its files changes (a layer file, or where a
 * missing one would be; a script an extension's command line names; the trust store), and the running host
 * reloaded with it: unchanged extensions keep running, changed ones restart, removed ones end, added ones start.
 * A project whose script changed is no longer trusted: its extensions stop, and stderr says what to run. A config
 * that does not load is reported, and the extensions running stay as they were.
 */

/** A loaded source, with the files to watch and the reload it makes. */
export interface Watchable {
  readonly source: RunSource
  readonly files: ReadonlyArray<string>
  readonly reload: (host: ExtensionHostShape) => Effect.Effect<ReloadReport, { readonly message: string }>
}

/** The files under `roots` that the config's extensions name (their scripts), as absolute paths. */
const scriptFiles = (
  config: Config,
  baseDir: string,
  roots: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(
    Effect.forEach(config.extensions, (x) =>
      Effect.forEach(roots, (root) =>
        Effect.map(scriptsOf(root, NodePath.resolve(baseDir, x.cwd ?? "."), x), (scripts) =>
          scripts.flatMap((s) => withTarget(NodePath.join(root, s.path)))
        )
      )
    ),
    (found) => found.flat(2)
  )

/** What `run` runs, loaded again, with what to watch: the file `--config` names, or the layers. */
export const loadWatchable = (
  config: Option.Option<string>
): Effect.Effect<Watchable, ConfigRejected, FileSystem.FileSystem | Path.Path | Stdio.Stdio> =>
  Option.isSome(config)
    ? Effect.gen(function* () {
        const loaded = yield* loadConfig(config.value)
        const scripts = yield* scriptFiles(loaded.config, loaded.baseDir, [loaded.baseDir])
        return {
          source: { label: config.value, config: loaded.config, host: processHost(loaded), untrusted: undefined },
          files: [NodePath.resolve(config.value), loaded.file, ...scripts],
          reload: (host) => host.reload({ config: loaded.config, baseDir: loaded.baseDir })
        }
      })
    : Effect.gen(function* () {
        const layers = yield* loadCliLayers("abhed-ext run")
        const cwd = process.cwd()
        const places = layerPlaces(process.env, NodeOs.homedir(), cwd)
        const project = yield* findProjectLayer(cwd)
        const roots = layerRoots(layers)
        const scripts = yield* scriptFiles(layers.config, cwd, roots)
        const untrusted = layers.untrusted
        const untrustedScripts =
          untrusted === undefined
            ? []
            : untrusted.print.extensions.flatMap((x) =>
                x.scripts.flatMap((s) => withTarget(NodePath.join(untrusted.print.root, s.path)))
              )
        return {
          source: { label: layersLabel(layers), config: layers.config, host: layersHost(layers), untrusted },
          files: [
            ...withTarget(places.managed),
            ...withTarget(places.user),
            ...projectPlaces(cwd, project?.root).flatMap(withTarget),
            trustStoreFile(),
            ...scripts,
            ...untrustedScripts
          ],
          reload: (host) => host.reload({ config: layers.config, policies: layers.policies, baseDir: cwd, roots })
        }
      })

/**
 * One line on stderr, escaped (`printable`): it names paths and extension names a cloned project chose, which may hold
 * terminal controls.
 */
const say = (line: string) => Console.error(printable(line))

/** One line for stderr: what the reload did. */
export const describeReload = (report: ReloadReport): string => {
  const parts = (
    [
      ["kept", report.kept],
      ["restarted", report.restarted],
      ["stopped", report.removed],
      ["started", report.added]
    ] as const
  )
    .filter(([, names]) => names.length > 0)
    .map(([what, names]) => `${what} ${names.join(", ")}`)
  // The set's fingerprint covers the settings too: changed with no extension changed, a setting did (a policy's
  // default flipped to allow is worth a word).
  const settings =
    report.before !== report.after && report.restarted.length + report.removed.length + report.added.length === 0
      ? ["the policy, builtin_tools or max_rewrite_rounds changed"]
      : []
  const said = [...parts, ...settings]
  return said.length > 0 ? said.join("; ") : "no extensions"
}

export interface WatchOptions {
  readonly config: Option.Option<string>
  readonly first: Watchable
  /**
   * Takes `source` as what the session starts with, when it has not begun starting its host: true then; false once
   * it has (its host is built from the source as it was: this one must be reloaded into it).
   */
  readonly adopt: (source: RunSource) => boolean
  /** The host, once started. */
  readonly host: Deferred.Deferred<ExtensionHostShape>
  /** The input has ended: the session is closing, nothing more is reloaded. */
  readonly ended: () => boolean
  /** Each source loaded and in use (for a host not started yet, `--summary` and `--strict`). */
  readonly loaded: (source: RunSource) => void
}

/**
 * Watch and reload until the scope closes. The first files are watched before this returns (a change made once it
 * has is seen); the loop runs in a fiber of the scope.
 */
export const watchRun = (
  options: WatchOptions
): Effect.Effect<void, never, Scope.Scope | FileSystem.FileSystem | Path.Path | Stdio.Stdio> =>
  Effect.gen(function* () {
    const wake = yield* Queue.sliding<void>(1)
    let watching = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(watching, Exit.void))
    const unwatched = yield* changes(options.first.files, wake).pipe(Scope.provide(watching))
    // Said once the watch is set: a change from here on reloads (and what is watched is no guess).
    const present = [
      ...new Set(
        options.first.files.filter(
          (file) => NodeFs.existsSync(file) && !unwatched.has(NodePath.dirname(NodePath.resolve(file)))
        )
      )
    ]
    yield* say(`abhed-ext run: watching ${present.length > 0 ? present.join(", ") : "the config's places"} for changes`)
    // The new watches first, then the old ones closed: an edit made meanwhile wakes one or the other (at worst
    // both, one reload: the queue holds one wake-up), never neither.
    const rewatch = (files: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const next = yield* Scope.make()
        yield* changes(files, wake).pipe(Scope.provide(next))
        const old = watching
        watching = next
        yield* Scope.close(old, Exit.void)
      })
    const step = Effect.gen(function* () {
      yield* Queue.take(wake)
      // Let the burst settle (a save is a truncate, a write, a rename), then read once.
      yield* Effect.sleep(Duration.millis(100))
      yield* Queue.clear(wake)
      if (options.ended()) return
      const next = yield* Effect.option(loadWatchable(options.config))
      if (Option.isNone(next)) {
        return yield* say(
          "abhed-ext run: reload failed: the extensions running are unchanged (fix the config: it is read again when it changes)"
        )
      }
      yield* rewatch(next.value.files)
      if (options.adopt(next.value.source)) {
        return yield* say(
          `abhed-ext run: reloaded ${next.value.source.label} (the session has not started: it starts with it)`
        )
      }
      // A host starting is built from the config as it was before this edit: reloaded once it has started.
      if (!Deferred.isDoneUnsafe(options.host)) {
        yield* say(`abhed-ext run: read ${next.value.source.label} again: reloading once the extensions have started`)
      }
      const host = yield* Deferred.await(options.host)
      if (options.ended()) return
      yield* next.value.reload(host).pipe(
        Effect.matchEffect({
          onSuccess: (report) =>
            Effect.andThen(
              Effect.sync(() => options.loaded(next.value.source)),
              say(`abhed-ext run: reloaded ${next.value.source.label}: ${describeReload(report)}`)
            ),
          onFailure: (e) => say(`abhed-ext run: reload failed: ${e.message}`)
        })
      )
    })
    yield* Effect.forkScoped(Effect.forever(step))
  })
