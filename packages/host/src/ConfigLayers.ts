import type { LayerPolicy } from "@abhed/core"
import { type Config, Defaults, type ExtensionConfig } from "@abhed/protocol"
import { readConfigText } from "@abhed/protocol/ConfigText"
import { Effect, Layer, type Path, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { AuditLog } from "./AuditLog.ts"
import { type ConfigInvalid, ConfigUnreadable, type LoadedConfig, loadConfig } from "./ConfigLoader.ts"
import { ExtensionHost, type ProcessHostOptions } from "./ExtensionHost.ts"
import { extensionCwd, fingerprintProject, type ProjectPrint } from "./Fingerprint.ts"
import { configHome, Trust } from "./Trust.ts"

/**
 * The config layers (docs/configuration.md): managed (the machine's administrator), user, project (the repository
 * in which the agent runs). Each is an `abhed.json` loaded on its own (JSONC, every problem with its file and
 * path; relative paths against its own folder), then merged: extensions are the union (one name in two layers is
 * an error: nothing is silently replaced), each layer's policy is evaluated and the decisions joined (stricter
 * wins), `builtin_tools` the union, `max_rewrite_rounds` the smallest set. The project layer is used only when the
 * `Trust` service says so; a managed `allow_managed_only` runs the managed extensions alone.
 */

export type LayerKind = "managed" | "user" | "project"

/** Where the layers are looked for. */
export interface LayerPlaces {
  readonly managed: string
  readonly user: string
  /** Where the project layer is searched from: this folder, then its parents up to the repository root. */
  readonly cwd: string
}

/** The usual places: `$ABHED_MANAGED_CONFIG` or /etc/abhed/abhed.json; `$XDG_CONFIG_HOME/abhed/abhed.json`. */
export const layerPlaces = (
  env: { readonly [name: string]: string | undefined },
  home: string,
  cwd: string
): LayerPlaces => ({
  managed:
    env["ABHED_MANAGED_CONFIG"] !== undefined && env["ABHED_MANAGED_CONFIG"] !== ""
      ? NodePath.resolve(cwd, env["ABHED_MANAGED_CONFIG"])
      : "/etc/abhed/abhed.json",
  user: NodePath.join(configHome(env, home), "abhed", "abhed.json"),
  cwd
})

/** One extension name configured in two layers: an error naming both files. */
export class LayerConflict extends Schema.TaggedError<LayerConflict>()("LayerConflict", {
  name: Schema.String,
  files: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return (
      `extension "${this.name}" is configured in two layers: ${this.files.join(" and ")}; rename one ` +
      `(a layer never replaces another's extension)`
    )
  }
}

export interface LoadedLayer {
  readonly kind: LayerKind
  readonly loaded: LoadedConfig
  /** Whether the file sets `max_rewrite_rounds` (a layer that leaves it out does not lower it). */
  readonly setsRounds: boolean
}

export interface UntrustedProject {
  readonly print: ProjectPrint
  /** What differs from what was trusted, one line each. */
  readonly changes: ReadonlyArray<string>
}

export interface Layers {
  /** The merged config: every extension's `cwd` is absolute (each resolved against its own file's folder). */
  readonly config: Config
  /** Each used layer's policy, to be joined (stricter wins). */
  readonly policies: ReadonlyArray<LayerPolicy>
  /** The layers found and used, in order managed, user, project. */
  readonly used: ReadonlyArray<LoadedLayer>
  /** The project layer, found but not trusted: nothing of it is used. */
  readonly untrusted: UntrustedProject | undefined
  /** For stderr: extensions ignored under `allow_managed_only`. */
  readonly warnings: ReadonlyArray<string>
}

const exists = (file: string): Effect.Effect<boolean> =>
  Effect.promise(() =>
    NodeFs.promises.access(file).then(
      () => true,
      () => false
    )
  )

/** A layer's file when it exists; a missing layer is no layer (any other problem is the loader's to report). */
const loadLayer = (
  kind: LayerKind,
  file: string
): Effect.Effect<LoadedLayer | undefined, ConfigUnreadable | ConfigInvalid, Path.Path> =>
  Effect.gen(function* () {
    const present = yield* Effect.promise(() =>
      NodeFs.promises.lstat(file).then(
        () => true,
        () => false
      )
    )
    if (!present) return undefined
    const loaded = yield* loadConfig(file)
    const text = yield* Effect.tryPromise({
      try: () => NodeFs.promises.readFile(loaded.file, "utf8"),
      catch: (e) => new ConfigUnreadable({ file, detail: String(e) })
    })
    const value = readConfigText(text).value
    const setsRounds = typeof value === "object" && value !== null && "max_rewrite_rounds" in value
    return { kind, loaded, setsRounds }
  })

/**
 * The project layer for `cwd`: `.abhed/abhed.json` in it or its nearest parent, up to the repository root (the
 * nearest folder holding `.git`). Outside a repository only `cwd` itself is looked in: a parent folder (a shared
 * /tmp, a home directory) is no project. Returns the file and the project root (the folder holding `.abhed`).
 */
export const findProjectLayer = (
  cwd: string
): Effect.Effect<{ readonly file: string; readonly root: string } | undefined> =>
  Effect.gen(function* () {
    const start = yield* Effect.promise(() => NodeFs.promises.realpath(cwd).catch(() => NodePath.resolve(cwd)))
    const chain: Array<string> = []
    let dir = start
    let repo = false
    for (;;) {
      chain.push(dir)
      if (yield* exists(NodePath.join(dir, ".git"))) {
        repo = true
        break
      }
      const parent = NodePath.dirname(dir)
      if (parent === dir) break
      dir = parent
    }
    for (const folder of repo ? chain : [start]) {
      const file = NodePath.join(folder, ".abhed", "abhed.json")
      if (yield* exists(file)) return { file, root: folder }
    }
    return undefined
  })

const absoluteCwd =
  (layer: LoadedLayer) =>
  (x: ExtensionConfig): ExtensionConfig => ({ ...x, cwd: extensionCwd(layer.loaded, x) })

/** Load the layers at `places` and merge them. */
export const loadLayers = (
  places: LayerPlaces
): Effect.Effect<Layers, ConfigUnreadable | ConfigInvalid | LayerConflict, Trust | Path.Path> =>
  Effect.gen(function* () {
    const managed = yield* loadLayer("managed", places.managed)
    const userLayer = yield* loadLayer("user", places.user)
    // The same file named twice (a managed config pointed at the user's) is one layer.
    const user = userLayer !== undefined && userLayer.loaded.file === managed?.loaded.file ? undefined : userLayer
    const found = yield* findProjectLayer(places.cwd)
    const projectLayer = found === undefined ? undefined : yield* loadLayer("project", found.file)
    const project =
      projectLayer !== undefined && [managed?.loaded.file, user?.loaded.file].includes(projectLayer.loaded.file)
        ? undefined
        : projectLayer
    let untrusted: UntrustedProject | undefined
    let trustedProject: LoadedLayer | undefined
    if (project !== undefined && found !== undefined) {
      const print = yield* fingerprintProject(found.root, project.loaded)
      const verdict = yield* Trust.use((t) => t.check(print))
      if (verdict.trusted) trustedProject = project
      else untrusted = { print, changes: verdict.changes }
    }
    const used = [managed, user, trustedProject].filter((l): l is LoadedLayer => l !== undefined)
    const managedOnly = managed?.loaded.config.allow_managed_only === true
    const warnings: Array<string> = []
    const running = used.filter((layer) => {
      if (!managedOnly || layer.kind === "managed") return true
      if (layer.loaded.config.extensions.length > 0) {
        warnings.push(
          `${managed?.loaded.file} sets allow_managed_only: the ${layer.kind} layer's extensions are not run (` +
            `${layer.loaded.config.extensions.map((x) => x.name).join(", ")}, in ${layer.loaded.file})`
        )
      }
      return false
    })
    const owner = new Map<string, string>()
    for (const layer of running) {
      for (const x of layer.loaded.config.extensions) {
        const first = owner.get(x.name)
        if (first !== undefined) return yield* new LayerConflict({ name: x.name, files: [first, layer.loaded.file] })
        owner.set(x.name, layer.loaded.file)
      }
    }
    const rounds = used.filter((l) => l.setsRounds).map((l) => l.loaded.config.max_rewrite_rounds)
    const policies = used.map((l): LayerPolicy => ({ layer: l.kind, policy: l.loaded.config.policy }))
    const config: Config = {
      extensions: running.flatMap((l) => l.loaded.config.extensions.map(absoluteCwd(l))),
      // The one policy of a single layer; with several, `policies` is what the host evaluates.
      policy: used.length === 1 && used[0] !== undefined ? used[0].loaded.config.policy : Defaults.policy,
      max_rewrite_rounds: rounds.length > 0 ? Math.min(...rounds) : Defaults.max_rewrite_rounds,
      builtin_tools: [...new Set(used.flatMap((l) => l.loaded.config.builtin_tools))].sort(),
      allow_managed_only: managedOnly
    }
    return { config, policies, used, untrusted, warnings }
  })

/**
 * The folders whose files count as the layers' extensions' scripts (a reload restarts an extension whose script
 * changed): each used layer's folder, the project's root for the project layer.
 */
export const layerRoots = (layers: Layers): ReadonlyArray<string> =>
  layers.used.map((l) =>
    l.kind === "project" ? NodePath.dirname(NodePath.dirname(l.loaded.file)) : NodePath.dirname(l.loaded.file)
  )

/** The lines an untrusted project is reported with: which file, what changed, and the command that trusts it. */
export const describeUntrusted = (u: UntrustedProject): ReadonlyArray<string> => [
  `the project config ${u.print.file} is not trusted: its extensions are not started` +
    (u.print.extensions.length > 0 ? ` (${u.print.extensions.map((x) => x.name).join(", ")})` : ""),
  ...u.changes.map((line) => `  ${line}`),
  `  review it and trust it with: abhed-ext trust ${u.print.root}`
]

/**
 * The host over the merged layers at `places`, for an embedder (what `abhed-ext run` does without `--config`): each
 * layer's policy joined, the project layer only if `Trust` says so; the warnings and an untrusted project are
 * logged as warnings. Fails like `loadLayers`, before any extension starts.
 */
export const hostFromLayers = (
  places: LayerPlaces,
  options: Omit<ProcessHostOptions, "baseDir" | "policies">
): Layer.Layer<ExtensionHost, ConfigUnreadable | ConfigInvalid | LayerConflict, AuditLog | Trust | Path.Path> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const layers = yield* loadLayers(places)
      for (const w of layers.warnings) yield* Effect.logWarning(w)
      if (layers.untrusted !== undefined) yield* Effect.logWarning(describeUntrusted(layers.untrusted).join("\n"))
      return ExtensionHost.layer(layers.config, {
        ...options,
        baseDir: places.cwd,
        policies: layers.policies,
        scriptRoots: layerRoots(layers)
      })
    })
  )
